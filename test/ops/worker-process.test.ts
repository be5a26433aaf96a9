import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../harness/service.js';
import { createLogger } from '../../src/logger.js';
import { BUSY_HELD } from '../../src/webhooks-in/ingest-priority.js';
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
});
