import type { Transaction } from 'kysely';
import type { Executor } from '../db/database.js';
import type { DB } from '../db/types.js';
import { errors } from '../http/errors.js';
import { clearHits, takeHit } from './rate-limits.queries.js';

export interface RateLimit {
  /** Names the limit in its buckets, e.g. `webhook-actions`. */
  name: string;
  /** What is counted, for the 429's message: `test and redeliver calls of a workspace`. */
  what: string;
  /** The most the hits in one window may cost together: calls, or bytes for a byte budget. */
  limit: number;
  windowMs: number;
}

/**
 * A sliding-window limit kept in Postgres, so it holds across every api process. Call it in
 * the transaction of the work it guards: a call that fails rolls its hit back. A hit costs 1
 * (a call) unless told otherwise (a byte budget reserves the bytes it may take, and settles
 * them with settleHit once known). Over the limit: 429 `rate_limited` with `retry-after`
 * (when enough of the counted hits have left the window). Returns the admitted hit's id.
 */
export async function enforceRateLimit(trx: Transaction<DB>, rule: RateLimit, subject: string | number, now: Date, cost = 1) {
  const hit = await takeHit(trx, `${rule.name}:${subject}`, rule.limit, new Date(now.getTime() - rule.windowMs), now, cost);
  if (hit.admitted) return hit.id;
  const retryAfter = Math.max(1, Math.ceil(((hit.freesAt?.getTime() ?? now.getTime()) + rule.windowMs - now.getTime()) / 1000));
  throw errors.rateLimited(retryAfter, `too many ${rule.what}: at most ${rule.limit} in ${rule.windowMs / 1000} s; try again later`);
}

/** Starts `subject` afresh under `rule`: its hits so far are forgotten (e.g. what they guarded is gone). */
export async function forgetRateLimit(db: Executor, rule: RateLimit, subject: string | number): Promise<void> {
  await clearHits(db, `${rule.name}:${subject}`);
}
