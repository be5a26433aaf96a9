import { uuid7Time } from '../crypto/uuid7.js';
import type { Deps } from '../deps.js';
import { defaultQueueOptions, type QueueDefinition } from '../jobs/queue.js';
import { inSpan } from '../tracing/tracing.js';
import { type DeliveriesJob, idsOf, WEBHOOK_QUEUE } from './inbox.enqueue.js';
import { systemClock, yieldToIngest } from './ingest-priority.js';
import { type BatchOutcome, processDeliveries } from './process-deliveries.js';

/** Deliveries applied in one transaction. */
export const PROCESS_BATCH = 250;

/**
 * The most one fetch's batches wait for ingestion in all (see yieldToIngest): a fetch runs
 * well inside the 120 s its jobs may take, however long a burst lasts.
 */
export const MAX_YIELD_PER_FETCH_MS = 30_000;

/**
 * Retries of processing errors follow the schedule of docs/webhooks.md and are scheduled by the worker itself (the
 * row is the truth). pg-boss's own retry covers what the worker cannot record: a worker that
 * died holding a job (its heartbeat stops and, 10 s later, the job is handed to another
 * attempt) or a database that was away when the batch ran. A second attempt never applies a
 * delivery twice: it takes only rows still `received` or `failed`, locked (see
 * processDeliveries). It backs off from 1 s (so a dead worker's jobs are taken up again at
 * once) to 5 min over 20 tries, riding out an outage of an hour or more before a job is given up.
 */
export const webhookQueue: QueueDefinition<DeliveriesJob> = {
  name: WEBHOOK_QUEUE,
  options: { ...defaultQueueOptions, retryLimit: 20, notify: true },
  worker: {
    // NOTIFY wakes the worker for new jobs only; retries, rechecks and the jobs of a worker
    // that died become due silently, and are found by the poll (pg-boss's default with NOTIFY
    // is every 30 s, which held a killed worker's jobs half a minute longer than needed).
    // A job carries up to JOB_DELIVERIES (500, a group commit's worth), so 20 jobs is at most 10,000
    // deliveries, applied PROCESS_BATCH at a time: seconds of work, plus at most 30 s of
    // waiting for ingestion (MAX_YIELD_PER_FETCH_MS), inside the 120 s a job may run.
    options: { batchSize: 20, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 2, burstWhenBatchFull: true, localConcurrency: 3 },
    async handle(deps, jobs, { ingest, searchIndex } = {}) {
      const ids = [...new Set(jobs.flatMap((j) => idsOf(j.data)))];
      const traces = tracesOf(jobs);
      const due = retryDueOf(jobs);
      let yielded = 0;
      for (let i = 0; i < ids.length; i += PROCESS_BATCH) {
        const batch = ids.slice(i, i + PROCESS_BATCH);
        yielded += await yieldToIngest(ingest, systemClock, MAX_YIELD_PER_FETCH_MS - yielded, oldestOf(batch));
        const started = performance.now();
        // The batch's messages are stored unindexed; the indexer parses them once processing pauses.
        searchIndex?.begin();
        let outcome: BatchOutcome;
        try {
          outcome = traces
            ? await inSpan(
                'process deliveries',
                batch.map((id) => traces.get(id)),
                { 'inbox.deliveries': batch.length },
                () => processDeliveries(deps, batch, due),
              )
            : await processDeliveries(deps, batch, due);
        } finally {
          searchIndex?.end();
        }
        record(deps, outcome, started);
      }
    },
  },
};

/** The traceparent each delivery's request had, when tracing put them in the jobs. */
function tracesOf(jobs: { data: DeliveriesJob }[]): Map<string, string> | undefined {
  let traces: Map<string, string> | undefined;
  for (const job of jobs) {
    if (!job.data.traces) continue;
    traces ??= new Map();
    for (const [id, t] of Object.entries(job.data.traces)) traces.set(id, t);
  }
  return traces;
}

/**
 * When the scheduled jobs of a fetch were due, by delivery id; undefined when none was
 * scheduled (every ingestion job), so the hot path builds nothing. A delivery that an
 * immediate job (ingestion, requeue) also asks for has no entry: it is processed as it is.
 */
function retryDueOf(jobs: { data: DeliveriesJob }[]): Map<string, number> | undefined {
  if (!jobs.some((j) => j.data.due !== undefined)) return undefined;
  const due = new Map<string, number>();
  const immediate = new Set<string>();
  for (const job of jobs) {
    const at = job.data.due;
    for (const id of idsOf(job.data)) {
      if (at === undefined) immediate.add(id);
      else due.set(id, Math.max(due.get(id) ?? at, at));
    }
  }
  for (const id of immediate) due.delete(id);
  return due;
}

/** When the oldest of these deliveries was received, read from their time-ordered ids. */
function oldestOf(ids: string[]): number {
  let oldest = Date.now();
  for (const id of ids) oldest = Math.min(oldest, uuid7Time(id) ?? oldest);
  return oldest;
}

function record(deps: Deps, outcome: BatchOutcome, started: number): void {
  const m = deps.metrics;
  m.processing.inc({ outcome: 'processed' }, outcome.processed);
  m.processing.inc({ outcome: 'failed' }, outcome.failed);
  m.processing.inc({ outcome: 'dead_letter' }, outcome.deadLettered);
  m.processing.inc({ outcome: 'skipped' }, outcome.skipped);
  m.retriesScheduled.inc(outcome.failed);
  m.batchDuration.observe((performance.now() - started) / 1000);
  const now = Date.now();
  for (const at of outcome.receivedAt) m.processingLatency.observe((now - at.getTime()) / 1000);
}
