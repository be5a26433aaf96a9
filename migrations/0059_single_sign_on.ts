import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Single sign-on with OpenID Connect (docs/security.md, "Single sign-on"). A workspace's
// `sso` setting lives in `workspaces.settings` like every other setting, except its client
// secret: that is sealed under INBOX_SECRET_KEY (bound to the workspace's row) in a column
// of its own, so no settings answer or audit entry can ever carry it.
// `sso_logins` holds a sign-in between its start and the identity provider's callback: the
// state (only its SHA-256; the browser holds the state itself in a cookie), the nonce the
// ID token must carry and the PKCE verifier. A row is spent by its callback and lives 10 minutes.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE workspaces ADD COLUMN sso_client_secret bytea;
    CREATE TABLE sso_logins (
      state_hash text PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      nonce text NOT NULL,
      code_verifier text NOT NULL,
      expires_at timestamptz(3) NOT NULL
    );
    CREATE INDEX sso_logins_expires_idx ON sso_logins (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE sso_logins;
    ALTER TABLE workspaces DROP COLUMN sso_client_secret;
  `.execute(db);
}
