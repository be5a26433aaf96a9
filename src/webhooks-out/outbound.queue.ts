import { defaultQueueOptions, type QueueDefinition } from '../jobs/queue.js';
import { type AttemptJob, OUTBOUND_QUEUE } from './outbound.enqueue.js';

/**
 * Served by the dispatcher (dispatcher.ts), not by `work()`: a job's deliveries go out ten at a
 * time and each outcome is recorded as it comes, so a slow receiver holds only its own
 * endpoint. pg-boss's retry covers a process that died holding a job (it expires and comes
 * back); the schedule of failed attempts is new jobs.
 */
export const outboundQueue: QueueDefinition<AttemptJob> = {
  name: OUTBOUND_QUEUE,
  options: defaultQueueOptions,
};
