import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Working a conversation (docs/conversations.md): the minutely sweep that ends snoozes reads
// the snoozed threads whose time has come across every workspace. Only snoozed threads are in
// the index, so it stays small and the sweep reads nothing else.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX threads_snoozed_idx ON threads (snoozed_until) WHERE status = 'snoozed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX threads_snoozed_idx`.execute(db);
}
