import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// One-time links the service mails or logs (docs/accounts.md): a password reset (1 h), an
// invite (7 days) and the first-run setup link (until used). Only the SHA-256 of a token is
// kept, so a copy of the database opens no account. A setup token has no user: it creates one.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE account_tokens (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('password_reset', 'invite', 'setup')),
      token_hash text NOT NULL UNIQUE,
      user_id integer REFERENCES users(id) ON DELETE CASCADE,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      expires_at timestamptz(3),
      used_at timestamptz(3),
      CHECK ((kind = 'setup') = (user_id IS NULL))
    );
    CREATE INDEX account_tokens_user_idx ON account_tokens (user_id) WHERE used_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE account_tokens`.execute(db);
}
