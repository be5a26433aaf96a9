import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Hits of rate limits that must hold across every process on one database (a workspace's
// webhook test and redeliver calls, …): one row per admitted call, in a bucket named by the
// limit and its subject. A bucket's rows older than its window are deleted as it is used, so
// a bucket holds at most its limit's worth of rows.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE rate_limit_hits (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      bucket text NOT NULL,
      created_at timestamptz(3) NOT NULL
    );
    CREATE INDEX rate_limit_hits_bucket_idx ON rate_limit_hits (bucket, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE rate_limit_hits`.execute(db);
}
