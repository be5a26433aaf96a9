import type { Job } from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS } from '../../src/jobs/retry-policy.js';
import type { AttemptResult } from '../../src/webhooks-out/attempt.js';
import { type AttemptJob, JOB_DELIVERIES } from '../../src/webhooks-out/outbound.enqueue.js';
import { type Context, DISABLE_AFTER_FAILING_MS, type Held, type Result, SECRET_REASON, settle } from '../../src/webhooks-out/settle.js';

// settle is the dispatcher's commit without its I/O: these cases need no database. The paths
// through the real dispatcher are in delivery.test.ts, sealed-secrets.test.ts and fairness.test.ts.

const NOW = new Date('2030-01-02T03:04:05Z');
let nextDelivery = 1;

function held(total: number, committed = 0): Held {
  return { job: { id: `job-${total}-${committed}`, retryCount: 0 } as Job<AttemptJob>, workspaceId: 1, total, committed, confirmedAt: 0 };
}

function ctx(endpointId: number, fields: Partial<Context> = {}): Context {
  return {
    id: nextDelivery++,
    event_id: '01900000-0000-7000-8000-000000000000',
    status: 'pending',
    job_id: 'job',
    attempt_count: 0,
    next_attempt_at: null,
    event_type: 'message.created',
    body: '{}',
    endpoint_id: endpointId,
    url: 'https://example.test/hook',
    enabled: true,
    disabled_reason: null,
    signature_scheme: 'standard',
    failing_since: null,
    secret_sealed: Buffer.alloc(0),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    ...fields,
  };
}

const answered = (outcome: AttemptResult['outcome'], statusCode: number): AttemptResult => ({
  outcome,
  statusCode,
  durationMs: 5,
  error: outcome === 'succeeded' ? null : `HTTP ${statusCode}`,
});

const attempted = (h: Held, c: Context, attempt: AttemptResult): Result => ({ kind: 'attempted', held: h, ctx: c, at: NOW, attempt });

let ids = 0;
const newJobId = () => `retry-${++ids}`;

describe('settle', () => {
  it('puts the retries of one endpoint due at one time in shared jobs of at most JOB_DELIVERIES', () => {
    const h = held(JOB_DELIVERIES + 1);
    const batch = Array.from({ length: JOB_DELIVERIES + 1 }, () => attempted(h, ctx(7), answered('failed', 500)));
    const s = settle(batch, new Map(), NOW, newJobId);

    expect(s.settlements.every((d) => d.status === 'pending' && d.attemptCount === 1)).toBe(true);
    const jobs = s.settlements.map((d) => d.nextJobId);
    expect(new Set(jobs).size).toBe(2);
    expect(jobs.filter((j) => j === jobs[0])).toHaveLength(JOB_DELIVERIES);
    expect(s.outcomes).toEqual(Array(JOB_DELIVERIES + 1).fill('retry'));
    expect(s.done).toEqual([h]);
    expect(s.starting).toEqual([7]);
  });

  it('fails a delivery for good after its last attempt, and a 410 at once, disabling that endpoint as gone', () => {
    const h = held(3);
    const last = ctx(1, { attempt_count: MAX_ATTEMPTS - 1 });
    const gone = ctx(2);
    const s = settle([attempted(h, last, answered('failed', 500)), attempted(h, gone, answered('gone', 410))], new Map(), NOW, newJobId);

    expect(s.settlements.map((d) => [d.id, d.status, d.nextJobId])).toEqual([
      [last.id, 'failed', null],
      [gone.id, 'failed', null],
    ]);
    expect(s.gone).toEqual([2]);
    expect(s.done).toEqual([]);
  });

  it('starts a streak only on an endpoint with no success in the batch, and ends one that may be running', () => {
    const h = held(4);
    const s = settle(
      [
        attempted(h, ctx(1), answered('failed', 500)),
        attempted(h, ctx(1), answered('succeeded', 200)),
        attempted(h, ctx(2), answered('failed', 500)),
        attempted(h, ctx(3), answered('succeeded', 200)),
      ],
      new Map([[3, false]]),
      NOW,
      newJobId,
    );
    expect(s.starting).toEqual([2]);
    expect(s.ending).toEqual([1]);
  });

  it('disables an endpoint failing since before the cut-off, and one whose secret does not open', () => {
    const h = held(3, 1);
    const since = new Date(NOW.getTime() - DISABLE_AFTER_FAILING_MS);
    const s = settle(
      [attempted(h, ctx(4, { failing_since: since }), answered('failed', 503)), { kind: 'unsealable', held: h, ctx: ctx(5), at: NOW }],
      new Map([[4, true]]),
      NOW,
      newJobId,
    );
    expect(s.stale).toEqual([4]);
    expect(s.staleBefore).toEqual(since);
    expect(s.unsealable).toEqual([5]);
    expect(s.attempts[1]).toMatchObject({ statusCode: null, error: `not sent: ${SECRET_REASON}` });
    expect(s.done).toEqual([h]);
  });
});
