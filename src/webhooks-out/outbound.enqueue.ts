import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import { uuid7 } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';
import { BOSS_SCHEMA } from '../jobs/boss.js';
import { jobsIn } from '../jobs/queue.js';

/**
 * Attempts of outbound deliveries: one job carries up to JOB_DELIVERIES deliveries of one
 * endpoint, and its group is that endpoint, so one job per endpoint is active at a time.
 */
export const OUTBOUND_QUEUE = 'outbound-webhook';
/**
 * Deliveries per job. A job of a receiver that never answers takes JOB_DELIVERIES / 10 × 10 s
 * (ten in flight, each timing out), well inside the queue's expiry; a larger job costs a busy
 * endpoint fewer fetches.
 */
export const JOB_DELIVERIES = 50;
/** NOTIFY channel that wakes the dispatchers when attempts are due now. */
export const OUTBOUND_CHANNEL = 'inbox_webhooks_out';

export interface AttemptJob {
  deliveryIds: number[];
  /**
   * Each delivery's event id, in the same order: the days its rows lie in, so that the job's
   * statements read only those (docs/operations.md, "Partitions"). Absent from jobs queued
   * before the tables were partitioned, which are read by delivery id alone.
   */
  eventIds?: string[];
}

export interface AttemptItem {
  deliveryId: number;
  eventId: string;
  endpointId: number;
  /**
   * The job's id, recorded on the delivery: a job whose id a delivery no longer names skips it.
   * Items with one job id form one job (same endpoint, same start).
   */
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
  const jobs = new Map<string, AttemptItem[]>();
  for (const i of items) {
    const job = jobs.get(i.jobId);
    if (job) job.push(i);
    else jobs.set(i.jobId, [i]);
  }
  await boss.insert(
    OUTBOUND_QUEUE,
    [...jobs.entries()].map(([id, [first, ...rest]]) => ({
      id,
      data: {
        deliveryIds: [first!.deliveryId, ...rest.map((i) => i.deliveryId)],
        eventIds: [first!.eventId, ...rest.map((i) => i.eventId)],
      } satisfies AttemptJob,
      group: { id: String(first!.endpointId) },
      ...(first!.startAfter ? { startAfter: first!.startAfter } : {}),
    })),
    { db: jobsIn(trx) },
  );
  // Sent at commit, once per transaction however many attempts it queued.
  if (items.some((i) => !i.startAfter)) await sql`SELECT pg_notify(${OUTBOUND_CHANNEL}, '')`.execute(trx);
}

/**
 * What a job that took in deliveries queued behind it (dispatcher.ts) writes with them, in
 * their transaction: its data names all it now owns, so that if its process dies it comes back
 * with every one; and the queued jobs all of whose deliveries it owns are deleted, as they
 * would only be fetched to find them gone. A job with a delivery not taken stays, sends that
 * one and finds the others stale. Answers how many jobs were deleted.
 */
export async function takeOverJobs(
  boss: PgBoss,
  trx: Executor,
  jobId: string,
  owned: AttemptJob,
  previousJobIds: string[],
): Promise<number> {
  const jobs = sql.table(`${BOSS_SCHEMA}.job`);
  await sql`UPDATE ${jobs} SET data = data || ${JSON.stringify(owned)}::jsonb WHERE name = ${OUTBOUND_QUEUE} AND id = ${jobId}`.execute(
    trx,
  );
  const previous = [...new Set(previousJobIds)].filter((id) => id !== jobId);
  if (previous.length === 0) return 0;
  const { rows } = await sql<{ id: string; delivery_ids: number[] | null }>`
    SELECT id, data->'deliveryIds' AS delivery_ids FROM ${jobs}
    WHERE name = ${OUTBOUND_QUEUE} AND id = ANY(${previous}::uuid[]) AND state IN ('created', 'retry')
    FOR UPDATE`.execute(trx);
  const mine = new Set(owned.deliveryIds);
  const emptied = rows.filter((r) => (r.delivery_ids ?? []).every((id) => mine.has(Number(id)))).map((r) => r.id);
  if (emptied.length > 0) await boss.deleteJob(OUTBOUND_QUEUE, emptied, { db: jobsIn(trx) });
  return emptied.length;
}

/**
 * A new attempt job's id. Time-ordered: of an endpoint's queued jobs, pg-boss starts the one
 * with the lowest id, which is so the oldest (a job taking in those queued behind it reads
 * from its own deliveries on; docs/outbound-webhooks.md).
 */
export const newJobId = (): string => uuid7();

/** Job ids for `count` deliveries of one endpoint due together: a new one every JOB_DELIVERIES. */
export function jobIdsFor(count: number): string[] {
  const ids: string[] = [];
  let id = '';
  for (let n = 0; n < count; n++) {
    if (n % JOB_DELIVERIES === 0) id = newJobId();
    ids.push(id);
  }
  return ids;
}
