import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The event log takes 2–3 rows per processed delivery, and each row's foreign key to
// `workspaces` was one more statement (a key-share lock on the workspace's row) on the
// delivery path. A workspace is never deleted, and every event is written with the id of the
// workspace whose change caused it, in that change's transaction: the check guarded nothing.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_workspace_id_fkey`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_events
      ADD CONSTRAINT webhook_events_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE
  `.execute(db);
}
