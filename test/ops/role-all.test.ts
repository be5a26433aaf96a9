import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHONE_NUMBER_ID, provisionTenant, type Service, startService, WEBHOOK_SECRET, waitUntil } from '../../harness/service.js';
import { whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { hmacSha256Hex } from '../../src/crypto/hmac.js';
import { METRICS_TIMEOUT_MS, WORKER_NICENESS } from '../../src/worker-process.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * `npm start` (role all) as it runs: the api acknowledges in one process, the queues are worked
 * in a child process it supervises. Its /metrics carries the worker's figures once each, a
 * killed worker process comes back, and SIGTERM stops both.
 */
const testDb = await createTestDatabase();
const db = new pg.Pool({ connectionString: testDb.url, max: 2 });
let svc: Service;
beforeAll(async () => {
  svc = await startService({ role: 'all', databaseUrl: testDb.url, entry: 'source', log: 'tail' });
  await provisionTenant(svc.url);
}, 90_000);
afterAll(async () => {
  await svc?.stop();
  await db.end();
  await testDb.drop();
});

type Line = { pid: number; role: string; msg: string; workerPid?: number; workers?: string[] };
const lines = (): Line[] =>
  svc
    .output()
    .split('\n')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Line];
      } catch {
        return []; // the tail's first, cut line
      }
    });
/** The pid of the worker process the parent last said works the queues. */
const workerPid = () => lines().findLast((l) => l.msg === 'worker process is working the queues')?.workerPid;
/** /proc/<pid>/stat's fields after the command name: [1] is the parent, [16] the niceness. */
const stat = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
const parentOf = (pid: number) => Number(stat(pid)[1]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A signed WhatsApp delivery of one text; answers its status and the message id. */
async function deliver(): Promise<{ status: number; id: string }> {
  const id = `wamid.roleall.${randomBytes(6).toString('hex')}`;
  const body = whatsappTextBody({ phoneNumberId: PHONE_NUMBER_ID, from: '447700900123', name: 'Ada', id, text: 'where is my order?' });
  const res = await fetch(`${svc.url}/webhooks/whatsapp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(WEBHOOK_SECRET, body)}` },
    body,
  });
  await res.text();
  return { status: res.status, id };
}
const stored = async (id: string) => (await db.query('SELECT 1 FROM messages WHERE external_id = $1', [id])).rowCount === 1;
const scrape = async () => (await fetch(`${svc.url}/metrics`)).text();
const samples = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
const value = (text: string, series: string) => {
  const line = samples(text).find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('npm start (role all)', () => {
  it('acknowledges in the parent and processes in its worker process', async () => {
    const parent = svc.child.pid!;
    const worker = workerPid()!;
    expect(worker).toBeGreaterThan(0);
    expect(worker).not.toBe(parent);
    expect(parentOf(worker)).toBe(parent);
    // Where both want the CPU, the acknowledging process gets most of it.
    expect(Number(stat(worker)[16])).toBe(WORKER_NICENESS);
    expect(Number(stat(parent)[16])).toBe(0);
    // The parent starts no consumer; the worker process, with its role on every line, starts them all.
    const started = lines().filter((l) => l.msg === 'inbox is running');
    expect(started.find((l) => l.pid === parent)).toMatchObject({ role: 'all', workers: [], workerPid: worker });
    expect(started.find((l) => l.pid === worker)?.role).toBe('worker');
    expect(started.find((l) => l.pid === worker)?.workers).toContain('webhook-retry');

    // With the worker process frozen the parent still acknowledges, and nothing processes the
    // delivery: a scrape waits METRICS_TIMEOUT_MS for the worker's figures and answers without.
    process.kill(worker, 'SIGSTOP');
    let frozen: { status: number; id: string };
    try {
      frozen = await deliver();
      expect(frozen.status).toBe(200);
      const began = Date.now();
      const text = await scrape();
      expect(Date.now() - began).toBeGreaterThanOrEqual(METRICS_TIMEOUT_MS - 50);
      expect(text).not.toContain('role="worker"');
      expect(value(text, 'inbox_webhook_processing_total{outcome="processed"}')).toBeUndefined();
      expect(await stored(frozen.id)).toBe(false);
    } finally {
      process.kill(worker, 'SIGCONT');
    }
    await waitUntil('the worker process to process the delivery', () => stored(frozen.id), 15_000, 50);
  }, 30_000);

  it('/metrics adds the worker’s counters to the parent’s, and no series twice', async () => {
    const text = await waitUntil(
      'the processing counter in /metrics',
      async () => {
        const t = await scrape();
        return (value(t, 'inbox_webhook_processing_total{outcome="processed"}') ?? 0) >= 1 && t;
      },
      10_000,
      100,
    );
    const series = samples(text).map((l) => l.slice(0, l.lastIndexOf(' ')));
    expect(series.length).toBeGreaterThan(100);
    expect(series.filter((s, i) => series.indexOf(s) !== i)).toEqual([]);
    const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    expect(families.filter((f, i) => families.indexOf(f) !== i)).toEqual([]);
    // The processing histogram is the worker's; the requests are the parent's.
    expect(value(text, 'inbox_webhook_processing_latency_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value(text, 'inbox_http_requests_total{method="POST",route="/webhooks/:integrationKey",status="200"}')).toBeGreaterThanOrEqual(
      1,
    );
    // Shared state once, from the parent; each process's own measures apart.
    expect(samples(text).filter((l) => l.startsWith('inbox_build_info'))).toHaveLength(1);
    expect(text).not.toMatch(/^inbox_(queue_jobs|queue_oldest_job_age_seconds|webhook_dead_letters|ready|build_info)\{[^}]*role=/m);
    expect(text).toMatch(/^process_cpu_seconds_total \S+$/m);
    expect(text).toMatch(/^process_cpu_seconds_total\{role="worker"\} \S+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m);
    expect(value(text, 'inbox_db_pool_max_connections{pool="db",role="worker"}')).toBe(10);
  }, 20_000);

  it('restarts a killed worker process, not ready meanwhile, and processing goes on', async () => {
    const killed = workerPid()!;
    process.kill(killed, 'SIGKILL');
    await waitUntil('/readyz to say not ready', async () => (await fetch(`${svc.url}/readyz`)).status === 503, 10_000, 20);
    const restarted = await waitUntil('a new worker process', async () => workerPid() !== killed && workerPid(), 30_000, 50);
    expect(parentOf(restarted)).toBe(svc.child.pid);
    expect(lines().find((l) => l.msg === 'worker process exited; restarting it')).toMatchObject({ role: 'all', workerPid: killed });
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    const after = await deliver();
    expect(after.status).toBe(200);
    await waitUntil('the restarted worker process to process a delivery', () => stored(after.id), 15_000, 50);
  }, 45_000);

  it('SIGTERM stops the worker process, then the parent, both cleanly', async () => {
    const worker = workerPid()!;
    await svc.stop();
    expect(await svc.exited).toBe(0);
    expect(alive(worker)).toBe(false);
    const stopped = lines().filter((l) => l.msg === 'inbox stopped');
    expect(stopped.map((l) => l.role)).toEqual(['worker', 'all']);
  }, 45_000);
});
