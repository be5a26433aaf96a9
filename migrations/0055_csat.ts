import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// CSAT (docs/reports.md): on each conversation, the survey sent (the token's hash only: the link
// is the secret) and the contact's rating and comment, which the reports read.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE conversations
      ADD COLUMN csat_token_hash text,
      ADD COLUMN csat_sent_at timestamptz(3),
      ADD COLUMN csat_rating smallint CHECK (csat_rating BETWEEN 1 AND 5),
      ADD COLUMN csat_comment text,
      ADD COLUMN csat_at timestamptz(3);
    CREATE UNIQUE INDEX conversations_csat_token_idx ON conversations (csat_token_hash) WHERE csat_token_hash IS NOT NULL;
    CREATE INDEX conversations_csat_idx ON conversations (workspace_id, csat_at, id) WHERE csat_at IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE conversations DROP COLUMN csat_at, DROP COLUMN csat_comment, DROP COLUMN csat_rating, DROP COLUMN csat_sent_at,
      DROP COLUMN csat_token_hash;
  `.execute(db);
}
