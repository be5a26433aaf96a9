import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn, type QueueDefinition } from '../jobs/queue.js';

/** One job per attempt of an outbound delivery, grouped by endpoint (its in-flight limit). */
export const OUTBOUND_QUEUE = 'outbound-webhook';
/** NOTIFY channel that wakes the dispatchers when attempts are due now. */
export const OUTBOUND_CHANNEL = 'inbox_webhooks_out';

export interface AttemptJob {
  deliveryId: number;
}

export interface AttemptItem {
  deliveryId: number;
  endpointId: number;
  /** The job's id, recorded on the delivery: a job whose id the delivery no longer names is stale. */
  jobId: string;
  startAfter?: Date;
}

/**
 * The one way an attempt is queued: by the outbox (first attempts), the dispatcher (retries),
 * the test and redeliver routes. Joins the caller's transaction, so an attempt exists exactly
 * when the change that caused it committed.
 */
export async function enqueueAttempts(boss: PgBoss, trx: Executor, items: AttemptItem[]): Promise<void> {
  if (items.length === 0) return;
  await boss.insert(
    OUTBOUND_QUEUE,
    items.map((i) => ({
      id: i.jobId,
      data: { deliveryId: i.deliveryId } satisfies AttemptJob,
      group: { id: String(i.endpointId) },
      ...(i.startAfter ? { startAfter: i.startAfter } : {}),
    })),
    { db: jobsIn(trx) },
  );
  // Sent at commit, once per transaction however many attempts it queued.
  if (items.some((i) => !i.startAfter)) await sql`SELECT pg_notify(${OUTBOUND_CHANNEL}, '')`.execute(trx);
}

/**
 * Served by the dispatcher (dispatcher.ts), not by `work()`: every job is sent on its own, so a
 * slow receiver holds only its own endpoint's slots. pg-boss's retry covers a process that died
 * holding a job (the job expires and comes back); the schedule of failed attempts is new jobs.
 */
export const outboundQueue: QueueDefinition<AttemptJob> = {
  name: OUTBOUND_QUEUE,
  options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 60, deleteAfterSeconds: 7 * 24 * 3600 },
};
