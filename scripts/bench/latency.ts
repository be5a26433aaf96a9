// Phase 4: one role-all process under a steady --rate deliveries/s; the median and p99 of
// received → processed, from the rows' own timestamps.
import type { Db } from '../../src/db/database.js';
import { pendingDeliveries, processedLatency } from './bench.queries.js';
import { burst, say, serve, signedDeliveries, waitFor } from './common.js';
import type { BenchOptions } from './options.js';

export async function measureLatency(options: BenchOptions, databaseUrl: string, db: Db) {
  say(`4 latency: role all at ${options.rate} deliveries/s for ${options.seconds} s`);
  const all = await serve(options, 'all', databaseUrl);
  try {
    const bodies = signedDeliveries(Math.ceil(options.rate * options.seconds * 1.1));
    const since = new Date();
    const paced = await burst(all.url, bodies, { connections: 50, overallRate: options.rate, duration: options.seconds });
    await waitFor('the paced deliveries to be processed', async () => (await pendingDeliveries(db)) === 0, 120_000);
    const lat = await processedLatency(db, since);
    return {
      p50LatencyMs: lat.p50,
      p99LatencyMs: lat.p99,
      pacedRps: Math.round(paced.result.requests.average),
      generatorCpu: paced.generatorCpu,
      rssMb: all.peakRssMb(),
    };
  } finally {
    await all.stop();
  }
}
