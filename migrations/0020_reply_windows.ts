import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Reply windows (docs/replies.md): a thread keeps the provider timestamp of its contact's last
// inbound message, so a thread read and a reply check need no per-read subquery over messages.
// Backfilled from the messages already stored.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE threads ADD COLUMN last_inbound_at timestamptz(3);

    UPDATE threads t SET last_inbound_at = m.at
    FROM (
      SELECT thread_id, max(created_at) AS at FROM messages WHERE direction = 'inbound' GROUP BY thread_id
    ) m
    WHERE m.thread_id = t.id;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE threads DROP COLUMN last_inbound_at;`.execute(db);
}
