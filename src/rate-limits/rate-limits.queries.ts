import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import { lockKey } from '../db/advisory-locks.js';
import type { Executor } from '../db/database.js';
import type { DB } from '../db/types.js';

/**
 * Takes a hit of `cost` in `bucket` unless the hits newer than `since` already cost more than
 * `limit - cost`. Calls of one bucket queue on an advisory lock held to the end of the
 * caller's transaction, so two processes cannot both take the last of the limit; the hit
 * rolls back with the call that took it. Returns the hit's id when admitted; when not, the
 * time of the oldest hit whose leaving the window frees enough for `cost` (null when no
 * leaving can: `cost` alone is over the limit).
 */
export async function takeHit(
  trx: Transaction<DB>,
  bucket: string,
  limit: number,
  since: Date,
  at: Date,
  cost = 1,
): Promise<{ admitted: true; id: number } | { admitted: false; freesAt: Date | null }> {
  await lockKey(trx, `inbox:rate:${bucket}`);
  await sql`DELETE FROM rate_limit_hits WHERE bucket = ${bucket} AND created_at <= ${since}`.execute(trx);
  const { rows } = await sql<{ used: number }>`
    SELECT coalesce(sum(cost), 0)::float8 AS used FROM rate_limit_hits WHERE bucket = ${bucket}`.execute(trx);
  const used = rows[0]!.used;
  if (used + cost > limit) {
    // The hits leave the window oldest first: the one whose leaving brings the rest under the
    // limit with room for `cost` says when to come back.
    const { rows: frees } = await sql<{ created_at: Date }>`
      SELECT created_at FROM (
        SELECT created_at, sum(cost) OVER (ORDER BY created_at, id) AS freed FROM rate_limit_hits WHERE bucket = ${bucket}
      ) h
      WHERE freed >= ${used + cost - limit}
      ORDER BY created_at LIMIT 1`.execute(trx);
    return { admitted: false, freesAt: cost > limit ? null : (frees[0]?.created_at ?? null) };
  }
  const { rows: inserted } = await sql<{ id: string }>`
    INSERT INTO rate_limit_hits (bucket, created_at, cost) VALUES (${bucket}, ${at}, ${cost}) RETURNING id`.execute(trx);
  return { admitted: true, id: Number(inserted[0]!.id) };
}

/** Sets what an admitted hit really cost (a reservation settled once the work knows its size). */
export async function settleHit(db: Executor, id: number, cost: number): Promise<void> {
  await db
    .updateTable('rate_limit_hits')
    .set({ cost: String(cost) })
    .where('id', '=', id)
    .execute();
}

/** Drops every hit of `bucket`: what was counted no longer counts. */
export async function clearHits(db: Executor, bucket: string): Promise<void> {
  await db.deleteFrom('rate_limit_hits').where('bucket', '=', bucket).execute();
}
