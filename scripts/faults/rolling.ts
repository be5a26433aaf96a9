// Rolling upgrade rehearsal: an old build (ROLL_FROM_ROOT, a worktree with its own `npm run
// build`) runs `--role api` and `--role worker` on one database under signed deliveries,
// replies and outbound webhooks to a slow loopback receiver; then, as docs/operations.md says,
// the new build's `inbox migrate` runs and the processes are replaced one by one while the
// traffic goes on. Every delivery, reply, outbound delivery, job and socket frame is counted.
// ROLL_MIGRATE_ON_START=true skips the migrate step (the new processes migrate on start),
// ROLL_API_FIRST=1 starts the new api before the new worker, ROLL_STOP_WORKERS_FIRST=1 stops
// the old worker before the migration (CHANGELOG's upgrade notes, from 0.2.0).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { checkExactlyOnce, checkReplies, drained, freshDatabase } from '../../harness/checks.js';
import { ingestLoad, replyTraffic, seedThreads } from '../../harness/load.js';
import { ADMIN_KEY, provisionTenant, ROOT, type Service, startService, waitUntil } from '../../harness/service.js';
import type { FaultPart } from './part.js';

function socket(url: string, token: string, name: string) {
  const frames: { at: number; type: string; raw: string }[] = [];
  let closed: string | undefined;
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime`, { headers: { authorization: `Bearer ${token}` } });
  ws.on('message', (raw) => {
    const e = JSON.parse(String(raw)) as { type: string };
    frames.push({ at: Date.now(), type: e.type, raw: String(raw).slice(0, 300) });
  });
  ws.on('close', (code, reason) => {
    closed = `${code} ${reason}`;
  });
  ws.on('error', () => {});
  return {
    name,
    frames,
    closed: () => closed,
    ready: () => waitUntil(`${name} ready`, async () => frames.some((f) => f.type === 'ready'), 10_000),
    close: () => ws.close(),
  };
}

function migrate(root: string, url: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [`${root}/dist/src/cli.js`, 'migrate'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/root',
        DATABASE_URL: url,
        INBOX_DATA_DIR: path.join(os.tmpdir(), 'inbox-faults-migrate'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const lines = out.trim().split('\n');
      const cause = lines.filter((l) => /error|deadlock|lock/i.test(l) && !/^\s+at /.test(l)).slice(0, 4);
      resolve(`exit ${code}: ${(code === 0 ? lines.slice(-3) : cause).join(' | ')}`);
    });
  });
}

export const rollingPart: FaultPart = {
  key: 'rolling',
  title: '8. rolling upgrade: old api + worker, new migrate, processes replaced one by one',
  async run({ postgres, fake, options }, report) {
    const oldRoot = process.env.ROLL_FROM_ROOT;
    if (!oldRoot) throw new Error('ROLL_FROM_ROOT: the old build');
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_rolling');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const received = new Map<string, number>();
    const receivedAt = new Map<string, number[]>();
    const steps: [string, number][] = [];
    const receiver = createServer((req, res) => {
      req.resume().on('end', () => {
        const id = String(req.headers['x-service-delivery']);
        received.set(id, (received.get(id) ?? 0) + 1);
        receivedAt.set(id, [...(receivedAt.get(id) ?? []), Date.now()]);
        // Slow: jobs queue behind each other (the new dispatcher takes them in).
        setTimeout(() => res.writeHead(204).end(), 150);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const env = { INBOX_MIGRATE_ON_START: 'false', INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', INBOX_QUEUE_POOL_MAX: '5' };
    const start = (root: string, role: 'api' | 'worker') =>
      startService({ role, databaseUrl: url, whatsappApiBaseUrl: fake.baseUrls.whatsapp, root, env });
    const services: Service[] = [];
    const logs: string[] = [];
    const stop = async (s: Service) => {
      steps.push([`stop ${s.role} ${s.child.pid}`, Date.now()]);
      await s.stop();
      steps.push([`stopped ${s.role} ${s.child.pid}`, Date.now()]);
      logs.push(s.logFile);
    };
    try {
      report.did(`old migrate: ${await migrate(oldRoot, url)}`);
      const oldApi = await start(oldRoot, 'api');
      const oldWorker = await start(oldRoot, 'worker');
      services.push(oldApi, oldWorker);
      const tenant = await provisionTenant(oldApi.url, 'Rolling');
      const admin = await fetch(`${oldApi.url}/v1/engage/workspaces/${tenant.workspaceId}/api-keys`, {
        method: 'POST',
        headers: { 'x-service-admin-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'admin', scopes: ['admin'] }),
      }).then((r) => r.json() as Promise<{ data: { key: string } }>);
      const ep = await fetch(`${oldApi.url}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': admin.data.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: hook, events: ['message.created'] }),
      });
      report.did(`endpoint ${ep.status}`);
      const threadIds = await seedThreads(oldApi.url, db, 20);
      const s1 = socket(oldApi.url, tenant.accessToken, 'socket on old api');
      await s1.ready();
      const rate = 100;
      const load1 = ingestLoad([oldApi.url], { connections: 10, rate });
      const replies1 = replyTraffic([oldApi.url], tenant, threadIds, { concurrency: 2, pauseMs: 50 });
      const phase = (options.seconds * 1000) / 5;
      const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
      await wait(phase);
      // What a user might do instead: no migrate step, the new processes migrating on start
      // (ROLL_MIGRATE_ON_START=true), and the new api before the new worker (ROLL_API_FIRST=1).
      const onStart = process.env.ROLL_MIGRATE_ON_START === 'true';
      // From 0.2.0 (CHANGELOG's upgrade notes): the old workers stop before the migration.
      if (process.env.ROLL_STOP_WORKERS_FIRST === '1') {
        await stop(oldWorker);
        report.did('old worker stopped before the migration');
      }
      if (onStart) report.did('no migrate step: the new processes start with INBOX_MIGRATE_ON_START=true');
      else report.did(`new migrate: ${await migrate(ROOT, url)}`);
      const startNew = (role: 'api' | 'worker') =>
        startService({
          role,
          databaseUrl: url,
          whatsappApiBaseUrl: fake.baseUrls.whatsapp,
          env: { ...env, INBOX_MIGRATE_ON_START: String(onStart) },
        });
      const apiFirst = process.env.ROLL_API_FIRST === '1';
      let early: Service | undefined;
      if (apiFirst) {
        early = await startNew('api');
        services.push(early);
        report.did('new api started first (no traffic to it yet)');
      }
      await wait(phase);
      const newWorker = await startNew('worker');
      services.push(newWorker);
      report.did(logs.includes(oldWorker.logFile) ? 'new worker started' : 'new worker started beside the old one');
      await wait(phase);
      if (!logs.includes(oldWorker.logFile)) {
        await stop(oldWorker);
        report.did('old worker stopped');
      }
      const newApi = early ?? (await startNew('api'));
      if (!early) services.push(newApi);
      const s2 = socket(newApi.url, tenant.accessToken, 'socket on new api');
      await s2.ready();
      const load2 = ingestLoad([newApi.url], { connections: 10, rate });
      const replies2 = replyTraffic([newApi.url], tenant, threadIds, { concurrency: 2, pauseMs: 50 });
      report.did('new api started, traffic to both apis');
      // An admin switches who sees what through the new api while a socket is on the old one.
      const patch = await fetch(`${newApi.url}/v1/workspace`, {
        method: 'PATCH',
        headers: { 'x-api-key': admin.data.key, 'content-type': 'application/json' },
        body: JSON.stringify({ restrictAgentsToTeams: true }),
      });
      report.did(`PATCH /v1/workspace restrictAgentsToTeams through the new api: ${patch.status}`);
      await wait(phase);
      const r1 = await load1.stop();
      await replies1.stop();
      await stop(oldApi);
      report.did('old api stopped');
      await wait(phase);
      const r2 = await load2.stop();
      await replies2.stop();
      const codes = (l: typeof load1) => [...l.statuses].map(([k, n]) => `${k} ${n}`).join(', ');
      report.did(`load on old api: ${codes(load1)} (${r1.errors} errors); on new api: ${codes(load2)} (${r2.errors} errors)`);
      report.did(`replies refused: old ${replies1.refused}, new ${replies2.refused}`);
      await drained(db, 120_000);
      const acknowledged = new Set([...load1.acknowledged, ...load2.acknowledged]);
      await checkExactlyOnce(report, db, acknowledged);
      await checkReplies(report, db, new Map([...replies1.accepted, ...replies2.accepted]), fake.sentAt);
      await waitUntil(
        'outbound settled',
        async () => (await db.query(`SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT 1`)).rowCount === 0,
        120_000,
      ).catch(() => {});
      const { rows: od } = await db.query<{ id: string; status: string }>('SELECT id::text, status FROM webhook_deliveries');
      const notOk = od.filter((d) => d.status !== 'succeeded');
      const twice = [...received.values()].filter((n) => n > 1).length;
      const never = od.filter((d) => !received.has(d.id)).length;
      report.check(
        'outbound: every delivery succeeded once',
        notOk.length === 0 && twice === 0 && never === 0,
        `${od.length} deliveries, ${notOk.length} not succeeded (${notOk
          .slice(0, 5)
          .map((d) => `${d.id} ${d.status}`)
          .join(', ')}), ${twice} received twice, ${never} never received`,
      );
      const { rows: jobs } = await db.query<{ name: string; state: string; n: number; output: unknown }>(
        `SELECT name, state, count(*)::int AS n, min(output::text) AS output FROM pgboss.job WHERE state IN ('failed','retry') GROUP BY name, state`,
      );
      for (const [id, times] of [...receivedAt].filter(([, t]) => t.length > 1).slice(0, 5)) {
        const { rows: tried } = await db.query(
          'SELECT attempted_at, status_code, error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY id',
          [Number(id)],
        );
        const near = (t: number) => steps.map(([n, at]) => `${n} ${((t - at) / 1000).toFixed(2)}s`).join(', ');
        report.did(`delivery ${id} received at ${times.map((t) => `[${near(t)}]`).join(' and ')}; attempts ${JSON.stringify(tried)}`);
      }
      report.check('no failed or retried job', jobs.length === 0, JSON.stringify(jobs).slice(0, 2000));
      for (const s of [s1, s2])
        report.did(
          `${s.name}: closed ${s.closed() ?? 'no'}; frames ${JSON.stringify(
            Object.fromEntries([...new Set(s.frames.map((f) => f.type))].map((t) => [t, s.frames.filter((f) => f.type === t).length])),
          )}; odd: ${s.frames
            .filter((f) => !/^(ready|message\.|thread\.|contact\.)/.test(f.type))
            .map((f) => f.raw)
            .join(' | ')}`,
        );
      s1.close();
      s2.close();
    } finally {
      for (const s of services) if (!logs.includes(s.logFile)) await stop(s);
      receiver.closeAllConnections();
      receiver.close();
      await db.end();
      for (const f of logs) {
        const bad = readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => /"level":(40|50|60)/.test(l));
        report.did(`${f}: ${bad.length} warn/error lines${bad.length ? `\n      ${bad.slice(0, 8).join('\n      ')}` : ''}`);
      }
    }
  },
};
