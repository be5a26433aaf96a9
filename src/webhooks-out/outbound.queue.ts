import { defaultQueueOptions, type QueueDefinition } from '../jobs/queue.js';
import { type AttemptJob, OUTBOUND_QUEUE } from './outbound.enqueue.js';

/** The queue's options but the retry's: what the queue's retry is for is in outboundQueue. */
const { retryDelayMax: _backoffOnly, ...options } = defaultQueueOptions;

/**
 * Served by the dispatcher (dispatcher.ts), not by `work()`: a job's deliveries go out ten at a
 * time and each outcome is recorded as it comes, so a slow receiver holds only its own
 * endpoint. pg-boss's retry covers a process that died holding a job (its heartbeat stops and
 * the job comes back); the schedule of failed attempts is new jobs.
 *
 * That retry is due at once, not after the default's 1–2 s: while the dead job was active its
 * endpoint's newer jobs queued behind it (one job per endpoint at a time), and the first of
 * them fetched in that gap would run ahead, take in what queued behind it and hold the
 * endpoint for up to a minute more with a slow receiver, with the dead job's deliveries waiting
 * behind it. Due at once, the dead job is its endpoint's oldest and is fetched first. The
 * heartbeat's lapse spaces the tries of a job that kills its worker each time.
 */
export const outboundQueue: QueueDefinition<AttemptJob> = {
  name: OUTBOUND_QUEUE,
  options: { ...options, retryDelay: 0, retryBackoff: false },
};
