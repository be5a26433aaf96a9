import { setTimeout as sleep } from 'node:timers/promises';
import type { IngestLoad } from '../jobs/queue.js';

/**
 * The time yieldToIngest reads and waits on: ms since the epoch (the scale of a delivery's
 * received time), and a pause. Tests pass one they advance themselves.
 */
export interface IngestClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: IngestClock = { now: () => Date.now(), sleep: (ms) => sleep(ms) };

/** Deliveries waiting for their commit at which ingestion counts as busy. */
export const BUSY_HELD = 32;
/**
 * A batch waits for busy ingestion until its oldest delivery was received this long ago, and
 * one holding an older delivery does not wait at all: ingestion's priority may delay
 * processing by about this much, not without bound, even under a load that never lets up (and
 * work taken over from a process that died is always older than this).
 */
export const MAX_PROCESSING_LAG_MS = 10_000;
export const CHECK_MS = 5;
/**
 * Busy ingestion stays busy while its event loop is this saturated (the share of the last
 * SATURATION_WINDOW_MS it spent running callbacks), however few deliveries wait at that moment.
 */
export const SATURATED = 0.7;
export const SATURATION_WINDOW_MS = 50;

/**
 * Ingestion goes first where the queue is worked beside it (role `all`'s worker process, told
 * over IPC by its parent). A provider waits for its answer and retries (or gives up) when it is
 * slow, while a queued delivery is already safe: so while acknowledgements queue up (BUSY_HELD
 * or more deliveries waiting for their commit), the worker holds its next batch back until
 * its oldest delivery (`oldestReceivedAt`, ms) has waited MAX_PROCESSING_LAG_MS, and the
 * backlog it leaves is processed once the burst is over. The machine's cores and the database
 * are then spent on answering; a burst longer than that is processed that far behind it. A
 * worker with no ingestion beside it (`load` undefined, role `worker`) never waits. Answers
 * how long it waited, so a caller can keep its jobs' total wait inside their time limit
 * (`maxMs`).
 */
export async function yieldToIngest(
  load: IngestLoad | undefined,
  clock: IngestClock = systemClock,
  maxMs = MAX_PROCESSING_LAG_MS,
  oldestReceivedAt = clock.now(),
): Promise<number> {
  const started = clock.now();
  if (load === undefined || maxMs <= 0 || started - oldestReceivedAt >= MAX_PROCESSING_LAG_MS || load.held < BUSY_HELD) return 0;
  const until = Math.min(started + maxMs, oldestReceivedAt + MAX_PROCESSING_LAG_MS);
  while (load.held >= BUSY_HELD && clock.now() < until) await clock.sleep(CHECK_MS);
  return clock.now() - started;
}
