import type { PgBoss } from 'pg-boss';
import { uuid7 } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';

/** The webhook-retry queue: every accepted delivery's id, and every scheduled retry. */
export const WEBHOOK_QUEUE = 'webhook-retry';

/** What a job of the webhook queue carries: the deliveries to process. */
export interface DeliveriesJob {
  ids: string[];
  /** One delivery, as jobs written before jobs carried batches. */
  id?: string;
  /**
   * With tracing on, the W3C traceparent of the request that brought each delivery, by id: a
   * job gathers the deliveries of many requests (a group commit), each of its own trace.
   */
  traces?: Record<string, string>;
  /**
   * For a job written to start later (a scheduled retry, a recheck): when it was due, in epoch
   * ms. A `failed` row whose next retry is later than this was failed again since the job was
   * written (a requeue and a new failure), and has a job of its own at that time: this one is
   * stale and leaves the row alone (isStaleRetry in process-deliveries.ts).
   */
  due?: number;
}

/** The ids a job stands for, whichever shape it was written in. */
export function idsOf(job: DeliveriesJob): string[] {
  return job.ids ?? (job.id === undefined ? [] : [job.id]);
}

/** Deliveries per job at most; the ingestion writer's group commits are no larger. */
export const JOB_DELIVERIES = 500;

/**
 * The one way a delivery is queued: at ingestion, on requeue and for a scheduled retry. The
 * jobs join the caller's transaction, so a row and its job commit together or not at all.
 *
 * One job carries every delivery of the call that is due at the same instant (up to
 * JOB_DELIVERIES): a group commit of 300 deliveries writes one job, not 300. A job row costs
 * its insert, four index entries, a fetch and a completion, most of what Postgres spends on a
 * delivery otherwise; the rows themselves say what is done (a second attempt takes only rows
 * still pending), so a job never needed to stand for one delivery.
 * Job ids are time-ordered (UUIDv7) rather than pg-boss's random default, so the job table's
 * primary key grows at its right edge instead of touching a random index page per job.
 */
export async function enqueueDeliveries(
  boss: PgBoss,
  trx: Executor,
  items: { id: string; startAfter?: Date; traceparent?: string | undefined }[],
): Promise<void> {
  if (items.length === 0) return;
  await boss.insert(WEBHOOK_QUEUE, jobsFor(items), { db: jobsIn(trx) });
}

/** A statement as pg-boss writes it: its text, the same for every call of one queue, and its values. */
export interface JobStatement {
  text: string;
  values: unknown[];
}

/**
 * pg-boss's own insert of the jobs `enqueueDeliveries` would write for `items`, not run: the
 * ingestion writer runs it as one statement with the rows it queues (storeDeliveries in
 * inbox.queries.ts), so a group commit is one round trip and one implicit transaction
 * instead of BEGIN, two statements and COMMIT. pg-boss still builds the statement and its
 * values (the queue's policy, the job's columns), so its table and defaults are never
 * restated here.
 */
export async function deliveriesJobStatement(
  boss: PgBoss,
  items: { id: string; traceparent?: string | undefined }[],
): Promise<JobStatement> {
  let statement: JobStatement | undefined;
  const capture = {
    executeSql: async (text: string, values?: unknown[]) => {
      statement = { text, values: values ?? [] };
      return { rows: [] };
    },
  };
  await boss.insert(WEBHOOK_QUEUE, jobsFor(items), { db: capture });
  if (!statement) throw new Error('pg-boss wrote no statement for the jobs');
  return statement;
}

/** The jobs of `items`: one per instant they are due at, of up to JOB_DELIVERIES ids. */
function jobsFor(items: { id: string; startAfter?: Date; traceparent?: string | undefined }[]) {
  const due = new Map<number | undefined, string[]>();
  let traces: Map<string, string> | undefined;
  for (const item of items) {
    const at = item.startAfter?.getTime();
    const ids = due.get(at);
    if (ids) ids.push(item.id);
    else due.set(at, [item.id]);
    if (item.traceparent !== undefined) {
      traces ??= new Map();
      traces.set(item.id, item.traceparent);
    }
  }
  const jobs = [];
  for (const [at, ids] of due) {
    for (let i = 0; i < ids.length; i += JOB_DELIVERIES) {
      const data: DeliveriesJob = { ids: ids.slice(i, i + JOB_DELIVERIES) };
      if (traces) data.traces = tracesOf(data.ids, traces);
      if (at !== undefined) data.due = at;
      jobs.push(at === undefined ? { id: uuid7(), data } : { id: uuid7(), data, startAfter: new Date(at) });
    }
  }
  return jobs;
}

function tracesOf(ids: string[], traces: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of ids) {
    const t = traces.get(id);
    if (t !== undefined) out[id] = t;
  }
  return out;
}
