// Phase 3: --workers worker processes drain everything phases 1–2 stored, timed by the rows'
// own processed_at (first batch to last).
import type { Db } from '../../src/db/database.js';
import { drainSeconds, inboxRows, pendingDeliveries } from './bench.queries.js';
import { say, serve, waitFor } from './common.js';
import type { BenchOptions } from './options.js';

export async function measureProcess(options: BenchOptions, databaseUrl: string, db: Db) {
  say(`3 process: ${options.workers} worker process(es) drain ${await inboxRows(db)} deliveries`);
  const workers = await Promise.all(Array.from({ length: options.workers }, () => serve(options, 'worker', databaseUrl)));
  try {
    await waitFor('the workers to drain the inbox', async () => (await pendingDeliveries(db)) === 0, 300_000);
    const seconds = await drainSeconds(db);
    const processed = await inboxRows(db, true);
    return {
      workers: options.workers,
      deliveriesPerSec: Math.round(processed / seconds),
      drained: processed,
      seconds: Number(seconds.toFixed(2)),
      rssMb: Math.max(...workers.map((w) => w.peakRssMb())),
    };
  } finally {
    for (const w of workers) await w.stop();
  }
}
