import { NormaliseError } from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import { type AccountHealth, recordAccountHealth } from '../connections/connection-health.queries.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { afterFailedAttempt } from '../jobs/retry-policy.js';
import { applyDeliveries, type DeliveryEvents } from '../messaging/apply-events.js';
import type { OutboundEvent } from '../messaging/events.js';
import { findConnectionsByAccount } from '../messaging/messaging.queries.js';
import { writeOutbox } from '../webhooks-out/outbox.js';
import { deliveryPayload } from './delivery-payload.js';
import { enqueueDeliveries } from './inbox.enqueue.js';
import {
  type DeadLettered,
  type FailedUpdate,
  findStillPending,
  type InboxRow,
  lockPendingRows,
  markFailed,
  markProcessed,
  type ProcessedUpdate,
} from './inbox.queries.js';
import { inboxSummary } from './inbox.resources.js';

export interface BatchOutcome {
  processed: number;
  /** When each processed delivery was received, for the received → processed latency. */
  receivedAt: Date[];
  failed: number;
  deadLettered: number;
  skipped: number;
}

/** Reads a row's events, or says why it cannot. */
function normaliseRow(row: InboxRow): { events: DeliveryEvents } | { error: string } {
  const adapter = adapterFor(row.integration_key);
  if (!adapter) return { error: `unknown integration key "${row.integration_key}"` };
  const payload = deliveryPayload(row);
  if (payload === null || payload === undefined) {
    return { error: 'the delivery body is not valid JSON (or not in a format this integration reads), so it has no events' };
  }
  try {
    return {
      events: {
        deliveryId: row.id,
        integrationKey: row.integration_key,
        events: adapter.normalise(payload, {
          verification: row.verification,
          ...(row.verified_account !== null ? { account: row.verified_account } : {}),
        }),
        ...(row.verified_account !== null ? { account: row.verified_account } : {}),
      },
    };
  } catch (err) {
    const reason = err instanceof NormaliseError ? err.message : `normaliser failed: ${(err as Error).message}`;
    return { error: `cannot read ${row.integration_key} payload: ${reason}` };
  }
}

/** Failure bookkeeping for one row: attempt counted, next retry scheduled or dead letter. */
function failure(row: InboxRow, appId: string | null, error: string, now: Date): FailedUpdate {
  const attemptCount = row.attempt_count + 1;
  const outcome = afterFailedAttempt(attemptCount, now);
  return { id: row.id, appId, status: outcome.status, attemptCount, nextRetryAt: outcome.nextRetryAt, lastError: error };
}

/**
 * Rows that cannot be read but whose one account was known on arrival (a connection's own URL,
 * or a secret that names its account): their connection resolves without the body, so they
 * get its app and its tenant's admin can see and requeue them (docs/webhooks.md). Others keep
 * the app they had.
 */
async function attributeUnreadable(db: Executor, failed: FailedUpdate[], rows: InboxRow[]): Promise<FailedUpdate[]> {
  if (failed.length === 0) return failed;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const accountOf = (f: FailedUpdate) => {
    const row = byId.get(f.id);
    return f.appId === null && row?.verified_account
      ? { integrationKey: row.integration_key, externalAccountId: row.verified_account }
      : null;
  };
  const keys = failed.flatMap((f) => accountOf(f) ?? []);
  if (keys.length === 0) return failed;
  const found = await findConnectionsByAccount(db, keys);
  return failed.map((f) => {
    const key = accountOf(f);
    const connection =
      key && found.find((c) => c.integration_key === key.integrationKey && c.external_account_id === key.externalAccountId);
    return connection ? { ...f, appId: connection.app_id } : f;
  });
}

/** `webhook_inbox.dead_lettered` for rows of a known app: the customer learns of a delivery given up on. */
function deadLetterEvents(rows: DeadLettered[]): OutboundEvent[] {
  return rows.flatMap((r) =>
    r.workspace_id === null ? [] : [{ type: 'webhook_inbox.dead_lettered' as const, workspaceId: r.workspace_id, data: inboxSummary(r) }],
  );
}

/**
 * What a batch tells of its connections' health, one entry per account: applied deliveries by
 * the accounts their events name; failed ones where the account is known without reading the
 * body (it came through the connection's own URL, or its secret named the bot).
 */
function batchHealth(
  readable: { row: InboxRow; events: DeliveryEvents }[],
  resolutions: Map<string, { error?: string }>,
  bound: ReadonlyMap<string, BoundOutcome>,
  rows: InboxRow[],
  failed: FailedUpdate[],
): AccountHealth[] {
  const health = new Map<string, AccountHealth>();
  const entry = (integrationKey: string, account: string) => {
    const key = `${integrationKey}|${account}`;
    let h = health.get(key);
    if (!h) {
      h = { integrationKey, account, delivered: false, error: null };
      health.set(key, h);
    }
    return h;
  };
  for (const { row, events } of readable) {
    if (resolutions.get(row.id)?.error) continue;
    // A delivery bound to one account touched no other (apply-events drops the rest). Events it
    // dropped for naming another account are said on the connection: an account id typed wrong
    // (the display number for the phone-number id) would otherwise lose every message while the
    // connection showed fresh deliveries and no error.
    const outcome = bound.get(row.id);
    if (events.account !== undefined && outcome) {
      const h = entry(row.integration_key, events.account);
      if (outcome.applied) h.delivered = true;
      if (outcome.note) h.error = outcome.note;
    } else
      for (const e of events.events)
        if ('externalAccountId' in e && e.externalAccountId !== '') entry(row.integration_key, e.externalAccountId).delivered = true;
  }
  if (failed.length > 0) {
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const f of failed) {
      const row = byId.get(f.id);
      if (row?.verified_account) entry(row.integration_key, row.verified_account).error = f.lastError;
    }
  }
  return [...health.values()];
}

/** The accounts a bound delivery's events name other than its own (receipts found by their message aside). */
function foreignAccounts(events: DeliveryEvents, account: string): string[] {
  return events.events.flatMap((e) =>
    (e.type === 'status' && e.resolveBy === 'sent_message') || e.externalAccountId === account ? [] : [e.externalAccountId],
  );
}

/**
 * What a delivery bound to one account (a connection's own URL) did with events naming another:
 * `note` says which it dropped (null: none), kept as the row's `lastError` while it is
 * `processed` (its own events were applied and a retry would drop the same ones again, so it
 * is no failure) and as the connection's; `applied`: some event was its own, or it had none.
 */
interface BoundOutcome {
  note: string | null;
  applied: boolean;
}

function boundOutcome(events: DeliveryEvents): BoundOutcome | undefined {
  if (events.account === undefined) return undefined;
  const others = foreignAccounts(events, events.account);
  if (others.length === 0) return { note: null, applied: true };
  return { note: droppedForOtherAccounts(events.integrationKey, others, events.account), applied: others.length < events.events.length };
}

function droppedForOtherAccounts(integrationKey: string, others: string[], account: string): string {
  const names = [...new Set(others)].map((a) => `"${a}"`).join(', ');
  return `events for ${integrationKey} account ${names} arrived on this connection's URL and were dropped: this connection's account is "${account}"`;
}

/** When a row another attempt holds is looked at again. */
export const RECHECK_LOCKED_SECONDS = 15;

/**
 * Two attempts of one delivery can overlap: a worker whose heartbeat lapsed (the database out
 * of its reach, or its process frozen) may still be applying a batch when the supervisor hands
 * its jobs to another attempt. That attempt skips the rows the first one holds and its job
 * completes; if the first one then rolls back, nothing would ever process those rows. So the
 * rows skipped while still pending get a job of their own to look at them again later: by
 * then they are processed (a no-op) or free again (processed now), and never applied twice.
 */
async function recheckLocked(deps: Deps, trx: Executor, wanted: string[], locked: InboxRow[]): Promise<void> {
  const taken = new Set(locked.map((r) => r.id));
  const held = await findStillPending(
    trx,
    wanted.filter((id) => !taken.has(id)),
  );
  if (held.length === 0) return;
  deps.log.info({ deliveries: held.length }, 'deliveries held by another attempt; looking at them again later');
  const at = new Date(deps.now().getTime() + RECHECK_LOCKED_SECONDS * 1000);
  await enqueueDeliveries(
    deps.boss,
    trx,
    held.map((id) => ({ id, startAfter: at })),
  );
}

async function scheduleRetries(deps: Deps, trx: Executor, failed: FailedUpdate[]): Promise<void> {
  const retries = failed.filter((f) => f.status === 'failed');
  await enqueueDeliveries(
    deps.boss,
    trx,
    retries.map((f) => ({ id: f.id, startAfter: f.nextRetryAt! })),
  );
}

/**
 * Processes a batch of deliveries in one transaction: every row is normalised, resolved and
 * applied together, set-based, and each row ends `processed` or `failed`/`dead_letter`
 * (with its retry job) in the same commit. All events of one delivery apply together or not
 * at all. When the batch as a whole hits an unexpected error, each row is retried alone so
 * one bad delivery cannot hold the others back.
 */
export async function processDeliveries(deps: Deps, ids: string[], due?: ReadonlyMap<string, number>): Promise<BatchOutcome> {
  try {
    return await processTogether(deps, ids, due);
  } catch (err) {
    if (ids.length === 1) return failAlone(deps, ids[0]!, err, due);
    deps.log.warn({ err, batch: ids.length }, 'batch failed; processing its deliveries one by one');
    const total: BatchOutcome = { processed: 0, receivedAt: [], failed: 0, deadLettered: 0, skipped: 0 };
    for (const id of ids) {
      let outcome: BatchOutcome;
      try {
        outcome = await processTogether(deps, [id], due);
      } catch (inner) {
        outcome = await failAlone(deps, id, inner, due);
      }
      total.processed += outcome.processed;
      total.receivedAt.push(...outcome.receivedAt);
      total.failed += outcome.failed;
      total.deadLettered += outcome.deadLettered;
      total.skipped += outcome.skipped;
    }
    return total;
  }
}

/**
 * A scheduled job for a `failed` row that has been requeued and failed again since the job
 * was written: the row's next retry is later, and the failure that set it scheduled a job for
 * it. Processing it here too would run two retry schedules side by side, each failure
 * scheduling its own next attempt, and dead-letter the row in a fraction of the schedule.
 */
function isStaleRetry(row: InboxRow, due: ReadonlyMap<string, number> | undefined): boolean {
  const at = due?.get(row.id);
  return at !== undefined && row.status === 'failed' && row.next_retry_at !== null && row.next_retry_at.getTime() > at;
}

async function processTogether(deps: Deps, ids: string[], due: ReadonlyMap<string, number> | undefined): Promise<BatchOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const wanted = [...new Set(ids)];
    const locked = await lockPendingRows(trx, wanted);
    // Rows this attempt could not lock are looked at again later; stale ones need no recheck.
    if (locked.length < wanted.length) await recheckLocked(deps, trx, wanted, locked);
    const rows = due ? locked.filter((r) => !isStaleRetry(r, due)) : locked;
    const unreadable: FailedUpdate[] = [];
    const readable: { row: InboxRow; events: DeliveryEvents }[] = [];
    for (const row of rows) {
      const result = normaliseRow(row);
      if ('error' in result) unreadable.push(failure(row, row.app_id, result.error, now));
      else readable.push({ row, events: result.events });
    }
    const failed = await attributeUnreadable(trx, unreadable, rows);
    const resolutions = await applyDeliveries(
      deps,
      trx,
      readable.map((r) => r.events),
      now,
    );
    const processed: ProcessedUpdate[] = [];
    const receivedAt: Date[] = [];
    const bound = new Map<string, BoundOutcome>();
    for (const { row, events } of readable) {
      const resolution = resolutions.get(row.id)!;
      if (resolution.error) failed.push(failure(row, resolution.appId, resolution.error, now));
      else {
        const outcome = boundOutcome(events);
        if (outcome) bound.set(row.id, outcome);
        processed.push({ id: row.id, appId: resolution.appId, note: outcome?.note ?? null });
        receivedAt.push(row.created_at);
      }
    }
    await markProcessed(trx, processed, now);
    await recordAccountHealth(trx, batchHealth(readable, resolutions, bound, rows, failed), now);
    const dead = await markFailed(trx, failed, now);
    await scheduleRetries(deps, trx, failed);
    await writeOutbox(deps.boss, trx, deadLetterEvents(dead), now);
    return {
      processed: processed.length,
      receivedAt,
      failed: failed.filter((f) => f.status === 'failed').length,
      deadLettered: failed.filter((f) => f.status === 'dead_letter').length,
      skipped: new Set(ids).size - rows.length,
    };
  });
}

/** Records an unexpected error against one row, in a transaction of its own. */
async function failAlone(deps: Deps, id: string, err: unknown, due: ReadonlyMap<string, number> | undefined): Promise<BatchOutcome> {
  deps.log.error({ err, deliveryId: id }, 'delivery processing failed');
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const [row] = await lockPendingRows(trx, [id]);
    if (!row) await recheckLocked(deps, trx, [id], []);
    if (!row || isStaleRetry(row, due)) return { processed: 0, receivedAt: [], failed: 0, deadLettered: 0, skipped: 1 };
    const f = failure(row, row.app_id, `processing error: ${(err as Error).message ?? String(err)}`, now);
    const dead = await markFailed(trx, [f], now);
    await scheduleRetries(deps, trx, [f]);
    await writeOutbox(deps.boss, trx, deadLetterEvents(dead), now);
    return {
      processed: 0,
      receivedAt: [],
      failed: f.status === 'failed' ? 1 : 0,
      deadLettered: f.status === 'dead_letter' ? 1 : 0,
      skipped: 0,
    };
  });
}
