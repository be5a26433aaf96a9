import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Live chat. A livechat connection's external_account_id is its public widget key; its
// allowed_origins are the web origins a browser may call the visitor routes from (empty: any).
// A visitor is one conversation on one widget: its contact (handle `handle` on the livechat
// channel), the thread opened for it, and the bearer token it holds, stored as a SHA-256
// hash. `ip` is the address that started it, for the per-address limit on new conversations.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}';

    CREATE TABLE livechat_visitors (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      connection_id bigint NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      contact_id bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
      thread_id bigint NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
      handle text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      email text,
      ip text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      expires_at timestamptz(3) NOT NULL
    );
    CREATE INDEX livechat_visitors_ip_idx ON livechat_visitors (ip, created_at);
    CREATE INDEX livechat_visitors_contact_idx ON livechat_visitors (contact_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE livechat_visitors;
    ALTER TABLE connections DROP COLUMN allowed_origins;
  `.execute(db);
}
