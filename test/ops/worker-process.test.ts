import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../harness/service.js';
import { createLogger } from '../../src/logger.js';
import { BUSY_HELD, SATURATION_WINDOW_MS } from '../../src/webhooks-in/ingest-priority.js';
import { WorkerProcess } from '../../src/worker-process.js';

/**
 * The parent's side of role all's worker process against a stand-in child: the child learns
 * when the parent's ingestion turns busy and calm again, so its workers hold their batches back
 * during a burst as a worker in the api's own process did.
 */
const ingest = { held: 0 };
const worker = new WorkerProcess({
  entry: path.join(import.meta.dirname, '../fixtures/processes/worker-child.mjs'),
  env: { ...process.env },
  log: createLogger('silent'),
  ingest,
});
afterAll(() => worker.stop());

/** Keeps this process's event loop busy (10 ms spins, timers and IPC in between) until stopped. */
function saturate(): () => void {
  let on = true;
  const spin = () => {
    if (!on) return;
    const until = performance.now() + 10;
    while (performance.now() < until) {
      // busy, as an api answering a burst is
    }
    setImmediate(spin);
  };
  setImmediate(spin);
  return () => {
    on = false;
  };
}

const told = async () => (await worker.metrics())?.find((m) => m.name === 'told_held')?.values[0]?.value;

describe('WorkerProcess', () => {
  it('tells the worker process when ingestion turns busy and when it calms down', async () => {
    await worker.start();
    expect(worker.up).toBe(true);
    expect(await told()).toBe(0);
    ingest.held = BUSY_HELD + 8;
    await waitUntil('the worker process to hear ingestion is busy', async () => (await told()) === BUSY_HELD + 8, 5000, 10);
    ingest.held = 3;
    await waitUntil('the worker process to hear ingestion is calm', async () => (await told()) === 3, 5000, 10);
  }, 30_000);

  it('keeps ingestion busy while the answering event loop is saturated, though few deliveries wait between commits', async () => {
    ingest.held = BUSY_HELD + 8;
    await waitUntil('the worker process to hear ingestion is busy', async () => (await told()) === BUSY_HELD + 8, 5000, 10);
    const stop = saturate();
    try {
      // Two whole windows of a saturated loop, so the relay has measured one.
      const from = performance.now();
      await waitUntil('two saturated windows', async () => performance.now() - from > 2 * SATURATION_WINDOW_MS, 5000, 10);
      ingest.held = 3; // a commit took what waited; the next requests are still being read
      for (let i = 0; i < 10; i++) expect(await told()).toBe(BUSY_HELD + 8);
    } finally {
      stop();
    }
    await waitUntil('the worker process to hear ingestion is calm', async () => (await told()) === 3, 5000, 10);
  }, 30_000);
});
