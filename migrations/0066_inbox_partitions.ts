import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// webhook_inbox becomes a table partitioned by day (docs/operations.md, "Partitions"), so that
// retention drops a day's partition instead of deleting its rows one by one.
//
// The key is the id: inbox ids are UUIDv7, whose first 48 bits are the millisecond they were
// made, so a day is the id range [uuid7Floor(day), uuid7Floor(next day)). The primary key stays
// (id) — it contains the partition key, as a partitioned table's unique indexes must — and
// every lookup by id reaches one partition's index, with no second key to carry around.
//
// Existing rows are not copied. Every migration of a version runs in one transaction, so any
// scan done here happens under the ACCESS EXCLUSIVE lock the rename takes, and blocks
// ingestion for as long as it reads the table: copying rewrites every row (and its WAL), and
// attaching the old table as a day range (even after a CHECK … NOT VALID, whose VALIDATE would
// run inside the same transaction) reads all of it. Attaching it as the DEFAULT partition of a
// table that has no other partition needs no scan at all, so this migration only renames,
// creates and attaches. Its indexes match the new parent's, so they are adopted, not rebuilt.
// The day partitions come right after, outside this transaction (src/db/partitions.ts): a
// CHECK (id < bound) NOT VALID on the old table, its VALIDATE (a read that blocks no insert),
// then, in a short transaction, the old table becomes the range below that bound and an empty
// table the DEFAULT. Until then every row lands in the old table, as it did before.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_inbox RENAME TO webhook_inbox_legacy;
    CREATE TABLE webhook_inbox (LIKE webhook_inbox_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS)
      PARTITION BY RANGE (id);
    ALTER TABLE webhook_inbox ADD PRIMARY KEY (id);
    CREATE INDEX webhook_inbox_app_status ON webhook_inbox (app_id, status, created_at DESC) WHERE app_id IS NOT NULL;
    CREATE INDEX webhook_inbox_trouble ON webhook_inbox (status, created_at DESC) WHERE status IN ('failed', 'dead_letter');
    ALTER TABLE webhook_inbox ATTACH PARTITION webhook_inbox_legacy DEFAULT;
  `.execute(db);
}

/** Back to one table: the partitions' rows are copied into it (a rewrite, under lock). */
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_inbox_whole (LIKE webhook_inbox INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS);
    INSERT INTO webhook_inbox_whole SELECT * FROM webhook_inbox;
    DROP TABLE webhook_inbox;
    ALTER TABLE webhook_inbox_whole RENAME TO webhook_inbox;
    ALTER TABLE webhook_inbox ADD CONSTRAINT webhook_inbox_pkey PRIMARY KEY (id);
    CREATE INDEX webhook_inbox_app_status_idx ON webhook_inbox (app_id, status, created_at DESC) WHERE app_id IS NOT NULL;
    CREATE INDEX webhook_inbox_trouble_idx ON webhook_inbox (status, created_at DESC) WHERE status IN ('failed', 'dead_letter');
  `.execute(db);
}
