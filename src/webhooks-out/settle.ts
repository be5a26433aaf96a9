import type { Job } from 'pg-boss';
import { afterFailedAttempt } from '../jobs/retry-policy.js';
import type { AttemptResult } from './attempt.js';
import type { AttemptRecord, DeliverySettlement, findDispatchContexts } from './deliveries.queries.js';
import { type AttemptJob, JOB_DELIVERIES, newJobId as makeJobId } from './outbound.enqueue.js';

/** An endpoint with no successful attempt for this long is disabled (docs/outbound-webhooks.md). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600 * 1000;
export const GONE_REASON = 'the endpoint answered 410 Gone';
export const FAILING_REASON = 'no successful delivery for 5 days';
export const SECRET_REASON =
  'the signing secret cannot be opened (INBOX_SECRET_KEY changed, or the row was altered or copied): rotate the secret, then enable the endpoint';

export type Context = Awaited<ReturnType<typeof findDispatchContexts>>[number];

/** A job being worked: its outcomes commit as they come; the last one's commit completes it. */
export interface Held {
  job: Job<AttemptJob>;
  /** The endpoint's workspace, for its share of the slots (undefined: the endpoint is gone). */
  workspaceId: number | undefined;
  total: number;
  committed: number;
  /**
   * When a heartbeat last confirmed the job is still this process's, by performance.now(): its
   * fetch, then each touch that refreshed it; -Infinity once one found it gone (dispatcher.ts).
   */
  confirmedAt: number;
}

export type Result =
  /** The delivery is gone, settled or owned by a newer job: nothing to send. */
  | { kind: 'stale'; held: Held }
  | { kind: 'attempted'; held: Held; ctx: Context; at: Date; attempt: AttemptResult }
  /** The endpoint is disabled: the delivery ends without an HTTP attempt. */
  | { kind: 'disabled'; held: Held; ctx: Context; at: Date }
  /** The endpoint's signing secret does not open: the delivery fails and the endpoint is disabled. */
  | { kind: 'unsealable'; held: Held; ctx: Context; at: Date };

/** What one commit writes for a batch of outcomes, decided without I/O. */
export interface Settlement {
  /** Outcomes in the batch per job. */
  counts: Map<Held, number>;
  /** Jobs whose last outcome is in the batch: the commit completes them. */
  done: Held[];
  attempts: AttemptRecord[];
  settlements: DeliverySettlement[];
  /** Endpoints whose failure streak starts, and ends, with the batch. */
  starting: number[];
  ending: number[];
  /** Endpoints to disable: answered 410 Gone, failing since before `staleBefore`, a secret that does not open. */
  gone: number[];
  stale: number[];
  staleBefore: Date;
  unsealable: number[];
  /** The metric's outcome of each settled delivery. */
  outcomes: string[];
}

/**
 * Settles a batch of outcomes at `now`: each delivery's attempt row and new state (a failure
 * is retried on the schedule of jobs/retry-policy.ts until it fails for good; a 410 is final),
 * the retry jobs, the endpoints' failure streaks as `streaking` says they stand, and the
 * endpoints to disable. Pure: the dispatcher's commit writes what it returns.
 */
export function settle(
  batch: Result[],
  streaking: ReadonlyMap<number, boolean>,
  now: Date,
  newJobId: () => string = makeJobId,
): Settlement {
  const counts = new Map<Held, number>();
  for (const r of batch) counts.set(r.held, (counts.get(r.held) ?? 0) + 1);
  const done = [...counts].filter(([h, n]) => h.committed + n === h.total).map(([h]) => h);
  // Retries of one endpoint due at one time share a job (of up to JOB_DELIVERIES).
  const retryJobs = new Map<string, { id: string; size: number }>();
  const retryJobId = (endpointId: number, at: Date) => {
    const key = `${endpointId}|${at.getTime()}`;
    let job = retryJobs.get(key);
    if (!job || job.size >= JOB_DELIVERIES) {
      job = { id: newJobId(), size: 0 };
      retryJobs.set(key, job);
    }
    job.size++;
    return job.id;
  };
  const attempts: AttemptRecord[] = [];
  const settlements: DeliverySettlement[] = [];
  const succeeded = new Set<number>();
  const failing = new Set<number>();
  const gone = new Set<number>();
  const unsealable = new Set<number>();
  const outcomes: string[] = [];
  const streakStart = new Map<number, Date | null>();
  for (const r of batch) {
    if (r.kind !== 'stale') streakStart.set(r.ctx.endpoint_id, r.ctx.failing_since);
    if (r.kind === 'stale') continue;
    const { ctx } = r;
    // A delivery that cannot go out fails with the reason, without an attempt at the receiver.
    const failUnsent = (error: string) => {
      attempts.push({
        deliveryId: ctx.id,
        eventId: ctx.event_id,
        attemptedAt: r.at,
        statusCode: null,
        durationMs: 0,
        error: `not sent: ${error}`,
      });
      settlements.push({
        id: ctx.id,
        eventId: ctx.event_id,
        jobId: r.held.job.id,
        status: 'failed',
        attemptCount: ctx.attempt_count,
        nextJobId: null,
        nextAttemptAt: null,
      });
      outcomes.push('failed');
    };
    if (r.kind === 'unsealable') {
      unsealable.add(ctx.endpoint_id);
      failUnsent(SECRET_REASON);
      continue;
    }
    if (r.kind === 'disabled') {
      failUnsent(`the endpoint is disabled${ctx.disabled_reason ? ` (${ctx.disabled_reason})` : ''}`);
      continue;
    }
    const { attempt } = r;
    attempts.push({
      deliveryId: ctx.id,
      eventId: ctx.event_id,
      attemptedAt: r.at,
      statusCode: attempt.statusCode,
      durationMs: attempt.durationMs,
      error: attempt.error,
    });
    const count = ctx.attempt_count + 1;
    if (attempt.outcome === 'succeeded') {
      succeeded.add(ctx.endpoint_id);
      settlements.push({
        id: ctx.id,
        eventId: ctx.event_id,
        jobId: r.held.job.id,
        status: 'succeeded',
        attemptCount: count,
        nextJobId: null,
        nextAttemptAt: null,
      });
      outcomes.push('succeeded');
      continue;
    }
    failing.add(ctx.endpoint_id);
    if (attempt.outcome === 'gone') gone.add(ctx.endpoint_id);
    const next = attempt.outcome === 'gone' ? null : afterFailedAttempt(count, now).nextRetryAt;
    settlements.push({
      id: ctx.id,
      eventId: ctx.event_id,
      jobId: r.held.job.id,
      status: next ? 'pending' : 'failed',
      attemptCount: count,
      nextJobId: next ? retryJobId(ctx.endpoint_id, next) : null,
      nextAttemptAt: next,
    });
    outcomes.push(next ? 'retry' : 'failed');
  }

  const starting = [...failing].filter((id) => !succeeded.has(id) && !streaking.get(id));
  const ending = [...succeeded].filter((id) => streaking.get(id) !== false);
  const staleBefore = new Date(now.getTime() - DISABLE_AFTER_FAILING_MS);
  const stale = [...failing].filter((id) => {
    const since = streakStart.get(id);
    return since !== undefined && since !== null && since <= staleBefore;
  });
  return {
    counts,
    done,
    attempts,
    settlements,
    starting,
    ending,
    gone: [...gone],
    stale,
    staleBefore,
    unsealable: [...unsealable],
    outcomes,
  };
}
