import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// One thread per (connection, contact) was kept by a unique index on (connection_id, contact_id),
// and a second index on (contact_id) served the reads by contact (a contact's threads, merging
// contacts, a visitor's thread). The unique index with the contact first serves both: ON CONFLICT
// (connection_id, contact_id) infers a unique index on those columns in any order. Every inbound
// message updates its thread outside HOT (last_message_at is in the list's indexes), writing an
// entry in each index of the table: one index fewer is one entry fewer per message processed
// (docs/performance.md, "Processing since 926e2a1"). No read looks threads up by connection
// alone: connections are never deleted on their own, and the list's `connectionId` filter walks
// the list in its order like its other filters.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE UNIQUE INDEX threads_contact_pair_key ON threads (contact_id, connection_id);
    DROP INDEX threads_pair_key;
    DROP INDEX threads_contact_idx;
    ALTER INDEX threads_contact_pair_key RENAME TO threads_pair_key;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX threads_contact_idx ON threads (contact_id);
    CREATE UNIQUE INDEX threads_connection_pair_key ON threads (connection_id, contact_id);
    DROP INDEX threads_pair_key;
    ALTER INDEX threads_connection_pair_key RENAME TO threads_pair_key;
  `.execute(db);
}
