import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../db/types.js';

/**
 * Takes one hit of `bucket` unless it already holds `limit` hits newer than `since`. Calls of
 * one bucket queue on an advisory lock held to the end of the caller's transaction, so two
 * processes cannot both take the last hit; the hit rolls back with the call that took it.
 * Returns whether it was admitted and, when not, the oldest hit still counted.
 */
export async function takeHit(
  trx: Transaction<DB>,
  bucket: string,
  limit: number,
  since: Date,
  at: Date,
): Promise<{ admitted: boolean; oldest: Date | null }> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`inbox:rate:${bucket}`}, 0))`.execute(trx);
  await sql`DELETE FROM rate_limit_hits WHERE bucket = ${bucket} AND created_at <= ${since}`.execute(trx);
  const { rows } = await sql<{ n: number; oldest: Date | null }>`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM rate_limit_hits WHERE bucket = ${bucket}`.execute(trx);
  const { n, oldest } = rows[0]!;
  if (n >= limit) return { admitted: false, oldest };
  await sql`INSERT INTO rate_limit_hits (bucket, created_at) VALUES (${bucket}, ${at})`.execute(trx);
  return { admitted: true, oldest };
}
