import type { InboxStatus } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { withIdempotency } from '../idempotency/with-idempotency.js';
import { enqueueDeliveries } from './inbox.enqueue.js';
import { lockRowForRequeue, resetForRequeue } from './inbox.queries.js';

/**
 * Idempotency keys are stored per `app_id` (NOT NULL, part of the key). The operator acts for
 * no app, so its keys live in a reserved space of their own. `operator` can never be an app id
 * (those are always `app_<hex>`), so an operator's key can neither replay nor be replayed by a
 * tenant's request with the same key. All operators share the space: keys are random per
 * request, and a replay only ever answers `{ id, status }` of a row every operator may see.
 */
export const OPERATOR_IDEMPOTENCY_SPACE = 'operator';

/** Whose rows a requeue may touch: one app's, or (the operator) any. */
export type RequeueScope = { appId: string } | { operator: true };

/**
 * Requeues a `failed` or `dead_letter` row: resets it to `received` and enqueues it,
 * and answers `{ id, status }` with the status the row had before. One function for the admin
 * and the operator routes; they differ only in `scope`.
 */
export async function requeueDelivery(
  deps: Deps,
  scope: RequeueScope,
  id: string,
  idempotencyKey: string | undefined,
): Promise<{ id: string; status: InboxStatus }> {
  if (!isUuid(id)) throw errors.notFound('webhook inbox row');
  const appId = 'appId' in scope ? scope.appId : null;
  const request = { space: appId ?? OPERATOR_IDEMPOTENCY_SPACE, key: idempotencyKey, request: `requeue ${id}`, statusCode: 200 };
  return withIdempotency(deps.db, request, async (trx) => {
    // Another app's row is not found, never forbidden: its existence is not revealed.
    const row = await lockRowForRequeue(trx, id, appId);
    if (!row) throw errors.notFound('webhook inbox row');
    if (row.status !== 'failed' && row.status !== 'dead_letter') {
      throw errors.conflict(`only failed or dead_letter rows can be requeued; this row is ${row.status}`);
    }
    // The answer is the status before the enqueue: once the job is queued, a worker may
    // move the row on before this request returns (docs/webhooks.md).
    const before = { id: row.id, status: row.status };
    await resetForRequeue(trx, row.id, deps.now());
    await enqueueDeliveries(deps.boss, trx, [{ id: row.id }]);
    return before;
  });
}
