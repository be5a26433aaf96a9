import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Working a conversation (docs/conversations.md).
// - threads.unread_count: inbound messages that arrived since an agent last read the thread.
//   Kept on the row by the statements that already write it (the inbound batch's upsert, the
//   read marker), so showing a thread never counts its messages: neither a list page nor the
//   inbound batch, which announces every thread it touched, slows down as threads grow.
// - threads_snoozed_idx: the minutely sweep that ends snoozes reads the snoozed threads whose
//   time has come across every workspace; only snoozed threads are in it, so it stays small.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE threads ADD COLUMN unread_count integer NOT NULL DEFAULT 0;
    UPDATE threads t SET unread_count = u.n
    FROM (
      SELECT m.thread_id, count(*)::int AS n
      FROM messages m JOIN threads th ON th.id = m.thread_id
      WHERE m.direction = 'inbound' AND m.kind = 'message' AND m.created_at > COALESCE(th.agent_last_seen_at, '-infinity'::timestamptz)
      GROUP BY m.thread_id
    ) u
    WHERE t.id = u.thread_id;
    CREATE INDEX threads_snoozed_idx ON threads (snoozed_until) WHERE status = 'snoozed';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX threads_snoozed_idx;
    ALTER TABLE threads DROP COLUMN unread_count;
  `.execute(db);
}
