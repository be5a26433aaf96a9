import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { checkExactlyOnce, drained, lastSettled, openWork, Report } from '../../harness/checks.js';
import { ingestLoad } from '../../harness/load.js';
import { provisionTenant, type Service, startService, waitUntil } from '../../harness/service.js';
import { freePort } from '../../src/db/embedded.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * The quick form of `npm run faults -- --parts kill`: the real service (`inbox serve`, from
 * source) under modest load, SIGKILLed and started again. Every acknowledged delivery becomes
 * exactly one message, and the work the killed process held is taken up again without waiting
 * for pg-boss's 120 s expiry (the bound below is generous, and still under it).
 */
const testDb = await createTestDatabase();
const db = new pg.Pool({ connectionString: testDb.url, max: 2 });
const services: Service[] = [];
afterAll(async () => {
  for (const s of services) await s.stop();
  await db.end();
  await testDb.drop();
});

describe('kill -9 under load, then a restart', () => {
  it('processes every acknowledged delivery exactly once, and takes up the killed process’s jobs without waiting for their expiry', async () => {
    const port = await freePort();
    const start = async () => {
      const svc = await startService({ role: 'all', databaseUrl: testDb.url, port, entry: 'source' });
      services.push(svc);
      return svc;
    };
    const first = await start();
    await provisionTenant(first.url);
    const load = ingestLoad([first.url], { connections: 20 });
    await waitUntil('300 deliveries acknowledged', async () => load.acknowledged.size >= 300, 60_000);
    // Killed while it holds jobs, so there is something to take up.
    const held = await waitUntil(
      'the worker to hold jobs',
      async () => {
        const open = await openWork(db);
        return open.activeJobs > 0 && open;
      },
      30_000,
      20,
    );
    await first.kill9();
    const acknowledgedAtKill = load.acknowledged.size;
    await start();
    await waitUntil(
      '300 more deliveries acknowledged after the restart',
      async () => load.acknowledged.size >= acknowledgedAtKill + 300,
      60_000,
    );
    await load.stop();

    await waitUntil('the work held at the kill to be settled', () => lastSettled(db, held.rows, held.replies), 60_000, 500);
    await drained(db, 60_000);
    const report = new Report('kill');
    await checkExactlyOnce(report, db, load.acknowledged);
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  }, 180_000);
});
