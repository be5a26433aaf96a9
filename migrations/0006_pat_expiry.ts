import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Personal-access tokens expire. Tokens issued before expiry existed get the default
// lifetime (90 days) counted from their creation, so the oldest stop working at once
// rather than living forever.
// API keys: a key created without scopes could use every route but the admin ones. Scopes
// are now enforced on every route and a key created without scopes gets `read`; existing
// scopeless keys are given `read` too (they keep reading and stop writing), rather than
// nothing (every call refused) or `write` (more than anyone chose).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE personal_access_tokens ADD COLUMN expires_at timestamptz(3);
    UPDATE personal_access_tokens SET expires_at = created_at + interval '90 days';
    ALTER TABLE personal_access_tokens ALTER COLUMN expires_at SET NOT NULL;
    UPDATE api_keys SET scopes = '{read}' WHERE cardinality(scopes) = 0;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE personal_access_tokens DROP COLUMN expires_at`.execute(db);
}
