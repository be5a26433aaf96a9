import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Erasure (docs/privacy.md): an erased contact keeps its row as a tombstone, so the threads
// that name it stay whole for reports, but every field of the person is cleared and
// `erased_at` says when. Every route reads contacts with `erased_at IS NULL`: a tombstone is
// 404 everywhere. The partial index keeps the list of live contacts as cheap as before.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE contacts ADD COLUMN erased_at timestamptz;
    DROP INDEX contacts_workspace_idx;
    CREATE INDEX contacts_workspace_idx ON contacts (workspace_id, created_at DESC, id DESC) WHERE erased_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX contacts_workspace_idx;
    CREATE INDEX contacts_workspace_idx ON contacts (workspace_id, created_at DESC, id DESC);
    ALTER TABLE contacts DROP COLUMN erased_at;
  `.execute(db);
}
