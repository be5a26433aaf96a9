import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// An auth code minted in a session (the login answer's, `generate-code`'s, a refresh's) dies
// with that session: once it is logged out, revoked or replaced, its code starts no new one
// (docs/auth.md, "Auth codes"). A code minted outside any session (single sign-on's) keeps
// `session_id` null. Codes already issued live at most 60 s and keep null too.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE auth_codes ADD COLUMN session_id uuid REFERENCES sessions(id) ON DELETE CASCADE;
    CREATE INDEX auth_codes_session_idx ON auth_codes (session_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE auth_codes DROP COLUMN session_id`.execute(db);
}
