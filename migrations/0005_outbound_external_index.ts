import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Looking a message up by its provider id alone (an SMS status callback that names no
// account) only ever asks for outbound messages, so the index holds only those. Inbound
// messages, nearly all of the table, no longer pay an index insert each.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX messages_outbound_external_idx ON messages (external_id) WHERE direction = 'outbound'`.execute(db);
  await sql`DROP INDEX messages_external_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX messages_external_idx ON messages (external_id)`.execute(db);
  await sql`DROP INDEX messages_outbound_external_idx`.execute(db);
}
