import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Every message is written with its thread's workspace and connection, in the statement that
// names the thread, and messages_thread_id_fkey already checks that the thread exists. The
// message's own keys to `workspaces` and `connections` were two more key-share lookups per
// stored message on the delivery path that guarded nothing: deleting a workspace or a
// connection deletes its threads (their keys cascade), and a thread's messages go with it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages
      DROP CONSTRAINT messages_workspace_id_fkey,
      DROP CONSTRAINT messages_connection_id_fkey
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages
      ADD CONSTRAINT messages_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces(id) ON DELETE CASCADE,
      ADD CONSTRAINT messages_connection_id_fkey FOREIGN KEY (connection_id) REFERENCES connections(id) ON DELETE CASCADE
  `.execute(db);
}
