import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type Service, startService } from '../../harness/service.js';
import { packageVersion } from '../../src/version.js';
import { createTestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/webhooks.js';

/**
 * Every role of the real service (`inbox serve`, from source) is probed and scraped the same
 * way, holds no more connections than its configuration allows, and reports how long the
 * oldest job of each queue has waited.
 */
const testDb = await createTestDatabase();
const db = new pg.Pool({ connectionString: testDb.url, max: 2 });
const services: Service[] = [];
afterAll(async () => {
  for (const s of services) await s.stop();
  await db.end();
  await testDb.drop();
});

const start = async (role: 'api' | 'worker', env: Record<string, string> = {}) => {
  const svc = await startService({ role, databaseUrl: testDb.url, entry: 'source', log: 'tail', env });
  services.push(svc);
  return svc;
};
const scrape = async (url: string) => {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
};
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

/** Connections this test's database holds, by application_name (this test's own pool left out). */
async function connectionsByName(): Promise<Record<string, number>> {
  const { rows } = await db.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'inbox%'
     GROUP BY application_name`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

describe('--role worker', () => {
  it('serves /healthz, /readyz and /metrics on INBOX_METRICS_PORT, with the build, its pools and Node’s standard metrics', async () => {
    const worker = await start('worker');
    // The harness gives each process its own port as INBOX_METRICS_PORT.
    expect(worker.output()).toContain(`"url":"${worker.url}"`);
    // The setup link is the console's: only a process that serves it logs one.
    expect(worker.output()).not.toContain('/app/setup#token=');
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${worker.url}/readyz`)).json()).toEqual({ status: 'ready' });
    // Nothing of the API: a worker is not a second way in.
    expect((await fetch(`${worker.url}/v1/threads`)).status).toBe(404);

    const text = await scrape(worker.url);
    expect(sample(text, `inbox_build_info{version="${packageVersion()}"}`)).toBe(1);
    for (const pool of ['db', 'queue']) {
      expect(sample(text, `inbox_db_pool_max_connections{pool="${pool}"}`)).toBe(10);
      expect(sample(text, `inbox_db_pool_connections{pool="${pool}",state="total"}`)).toBeGreaterThan(0);
      expect(sample(text, `inbox_db_pool_connections{pool="${pool}",state="idle"}`)).toBeGreaterThanOrEqual(0);
      expect(sample(text, `inbox_db_pool_waiting_requests{pool="${pool}"}`)).toBe(0);
    }
    expect(sample(text, 'inbox_queue_oldest_job_age_seconds{queue="webhook-retry"}')).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^process_cpu_seconds_total \S+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
    expect(text).not.toMatch(/^inbox_(process|nodejs)_/m);
    // The scrape itself is counted like any request.
    expect(await scrape(worker.url)).toMatch(/^inbox_http_requests_total\{method="GET",route="\/metrics",status="200"\} [1-9]/m);
    // Its connections: the two pools and the outbound dispatcher's LISTEN (docs/operations.md).
    const held = await connectionsByName();
    expect(Object.keys(held).sort()).toEqual(['inbox', 'inbox-queue', 'inbox-webhooks-out']);
    expect(held.inbox).toBeLessThanOrEqual(10);
    expect(held['inbox-queue']).toBeLessThanOrEqual(10 + 1);
    expect(held['inbox-webhooks-out']).toBe(1);
    await worker.stop();
  }, 90_000);

  it('answers /readyz 200 only once it works its queues, as its start line says', async () => {
    const worker = await startService({ role: 'worker', databaseUrl: testDb.url, entry: 'source', log: 'tail', waitForStart: false });
    services.push(worker);
    // Its port opens before the queues' consumers start: the first 200 must find them started,
    // and the start line that says so written. The line may reach this process after the 200
    // (another pipe), so its own time is compared with the moment the 200 came.
    const readyAt = await waitFor(
      () =>
        fetch(`${worker.url}/readyz`).then(
          (r) => (r.ok ? Date.now() : undefined),
          () => undefined,
        ),
      'the worker to be ready',
      60_000,
    );
    const started = await waitFor(async () => /^\{.*"msg":"inbox is running"\}$/m.exec(worker.output())?.[0], 'the worker’s start line');
    expect(JSON.parse(started).time).toBeLessThanOrEqual(readyAt);
    await worker.stop();
  }, 90_000);
});

describe('the connection budget', () => {
  it('an api process holds INBOX_DB_POOL_MAX query connections at most, and one per listener', async () => {
    // Only this process connects to the test's database now.
    expect(await connectionsByName()).toEqual({});
    const api = await start('api', { INBOX_DB_POOL_MAX: '3', INBOX_QUEUE_POOL_MAX: '2' });
    expect(api.output()).toContain('/app/setup#token=');
    // Bursts far wider than the pool (every /readyz asks both pools) until it has grown to its
    // limit: how far one burst grows it depends on how the requests happen to interleave.
    let held: Record<string, number> = {};
    await waitFor(async () => {
      const answers = await Promise.all(Array.from({ length: 60 }, () => fetch(`${api.url}/readyz`).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);
      held = await connectionsByName();
      expect(held.inbox).toBeLessThanOrEqual(3);
      return held.inbox === 3;
    }, 'the pool to grow to INBOX_DB_POOL_MAX under bursts');
    // It grew to its limit, and no further (idle ones are kept 10 s).
    expect(held.inbox).toBe(3);
    // pg-boss's pool, plus the one connection it LISTENs on.
    expect(held['inbox-queue']).toBeGreaterThanOrEqual(2);
    expect(held['inbox-queue']).toBeLessThanOrEqual(2 + 1);
    expect(held['inbox-realtime']).toBe(1);
    expect(held['inbox-livechat']).toBe(1);
    expect(Object.keys(held).sort()).toEqual(['inbox', 'inbox-livechat', 'inbox-queue', 'inbox-realtime']);
    const text = await scrape(api.url);
    expect(sample(text, 'inbox_db_pool_max_connections{pool="db"}')).toBe(3);
    expect(sample(text, 'inbox_db_pool_max_connections{pool="queue"}')).toBe(2);
    await api.stop();
  }, 90_000);
});

describe('inbox_queue_oldest_job_age_seconds', () => {
  it('is the age of the oldest due job of each queue; a job scheduled for later is not waiting', async () => {
    // An api process runs no workers, so the jobs stay where they were put.
    const api = await start('api');
    await db.query(
      `INSERT INTO pgboss.job (name, data, start_after, created_on)
       VALUES ('outbound-webhook', '{}', now() - interval '90 seconds', now() - interval '100 seconds'),
              ('outbound-webhook', '{}', now() - interval '30 seconds', now() - interval '30 seconds'),
              ('thread-snooze', '{}', now() + interval '1 hour', now() - interval '1 hour')`,
    );
    const text = await scrape(api.url);
    const age = sample(text, 'inbox_queue_oldest_job_age_seconds{queue="outbound-webhook"}')!;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(100);
    expect(sample(text, 'inbox_queue_oldest_job_age_seconds{queue="thread-snooze"}')).toBe(0);
    expect(sample(text, 'inbox_queue_jobs{queue="outbound-webhook",state="created"}')).toBe(2);
  }, 90_000);
});
