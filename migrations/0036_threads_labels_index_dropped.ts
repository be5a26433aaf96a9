import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// threads_labels_idx (0015) served the thread list's `label=` filter until thread_labels (0019)
// took it over: a rare label's threads are read by id from thread_labels, a common one's by
// walking the list in page order, so no plan reads this index any more (docs/performance.md,
// "Processing"). It was still written on every change of a thread that was not HOT, which is
// every inbound message's (last_message_at is in the list's indexes): a GIN entry for each
// label, or the empty-array entry, per message processed.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS threads_labels_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX threads_labels_idx ON threads USING gin (labels)`.execute(db);
}
