import type { Transaction } from 'kysely';
import type { Db } from '../db/database.js';
import type { DB } from '../db/types.js';
import { errors } from '../http/errors.js';
import { findIdempotentResponse, lockIdempotencyKey, saveIdempotentResponse } from './idempotency.queries.js';

export interface IdempotentRequest {
  /** The key space: an app id, or a reserved space such as the operator's. */
  space: string;
  /** The `Idempotency-Key` header; without one the work simply runs in a transaction. */
  key: string | undefined;
  /**
   * What the request asked for (route and the parts of its input that matter, a body by its
   * hash). A key replayed with another request is refused with 409.
   */
  request: string;
  /** The status code of the answer being stored. */
  statusCode: number;
}

/**
 * Checked before a stored answer is given again: it throws (404) when the caller may not see
 * what the answer shows, as a thread of a team it is not in (docs/teams.md).
 */
export type ReplayCheck<T> = (trx: Transaction<DB>, answer: T) => Promise<void>;

/**
 * Runs `work` in a transaction, once per (space, key): the first request's answer is stored in
 * the same commit as its effects, and a request with the same key answers that stored answer
 * without running `work` again. A request that arrives while the first is still running waits
 * for it (a transaction-scoped advisory lock on the key) and then replays its answer: without
 * the lock both would miss the stored answer, both would act, and the second would fail on
 * what the first changed. See docs/replies.md and docs/webhooks.md.
 */
export async function withIdempotency<T>(
  db: Db,
  req: IdempotentRequest & { replayable?: ReplayCheck<T> },
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { key } = req;
    if (key === undefined) return work(trx);
    await lockIdempotencyKey(trx, req.space, key);
    const seen = await findIdempotentResponse(trx, req.space, key);
    if (seen) {
      if (seen.request !== req.request) throw errors.conflict('this idempotency-key was used for another request');
      await req.replayable?.(trx, seen.response as T);
      return seen.response as T;
    }
    const answer = await work(trx);
    await saveIdempotentResponse(trx, { space: req.space, key, request: req.request, statusCode: req.statusCode, response: answer });
    return answer;
  });
}
