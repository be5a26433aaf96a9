import type { QueueDefinition } from '../jobs/queue.js';
import { WEBHOOK_QUEUE } from './inbox.enqueue.js';
import { processDeliveries } from './process-deliveries.js';

/**
 * Retries of processing errors follow SPEC §8.2 and are scheduled by the worker itself (the
 * row is the truth). pg-boss's own retry covers what the worker cannot record: a worker that
 * died holding a job (the job expires and is fetched again) or a database that was away when
 * the batch ran. It backs off from 5 s to 5 min over 20 tries, riding out an outage of an hour
 * or more before a job is given up.
 */
export const webhookQueue: QueueDefinition<{ id: string }> = {
  name: WEBHOOK_QUEUE,
  options: { retryLimit: 20, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 120, deleteAfterSeconds: 7 * 24 * 3600, notify: true },
  worker: {
    options: { batchSize: 250, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true, localConcurrency: 3 },
    async handle(deps, jobs) {
      const started = performance.now();
      const outcome = await processDeliveries(deps, jobs.map((j) => j.data.id));
      const m = deps.metrics;
      m.processing.inc({ outcome: 'processed' }, outcome.processed);
      m.processing.inc({ outcome: 'failed' }, outcome.failed);
      m.processing.inc({ outcome: 'dead_letter' }, outcome.deadLettered);
      m.processing.inc({ outcome: 'skipped' }, outcome.skipped);
      m.retriesScheduled.inc(outcome.failed);
      m.batchDuration.observe((performance.now() - started) / 1000);
      const now = Date.now();
      for (const at of outcome.receivedAt) m.processingLatency.observe((now - at.getTime()) / 1000);
    },
  },
};
