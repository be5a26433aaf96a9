// `npm run bench [-- --json] [--seconds 5] [--rounds 3] [--connections 200] [--rate 500] [--workers 1] [--sends 5000] [--outbound 20000] [--ingest-only | --outbound-only | --single [--sustained 2000]]`
//
// Measures, in one run on one machine, side by side:
//   1. ceiling: a no-op Fastify route that reads the raw body and checks the same HMAC;
//   2. ingest:  POST /webhooks/whatsapp on the real service (role api), signed ~1.5 KB bodies;
//      1 and 2 alternate for --rounds rounds and the median of the per-round ratios is reported;
//   3. process: --workers worker processes (one by default) drain everything phase 2 stored;
//   4. latency: role all under a steady 500 deliveries/s, median received → processed;
//   5. send:    --sends replies POSTed to the threads phase 3 made, sent by one role-all process
//      through a loopback fake WhatsApp Cloud API, timed from the first sent to the last;
//   6. outbound: --outbound webhook deliveries queued at once (one endpoint, then four), sent by
//      one role-all process to a loopback receiver, first received to last; then events written
//      one by one at 200/s, each timed from its createdAt to its arrival at the receiver.
// Throughput is reported as a ratio against the ceiling because shared machines drift.
// Every number comes from this run; nothing is asserted.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createConnection } from '../src/connections/connections.service.js';
import { hmacSha256Hex } from '../src/crypto/hmac.js';
import { issueApiKey } from '../src/api-keys/api-keys.service.js';
import { createDatabase, type Db } from '../src/db/database.js';
import { startFakeProviders } from '../test/helpers/fake-providers.js';
import { freePort, startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { startBoss } from '../src/jobs/boss.js';
import { jobsIn } from '../src/jobs/queue.js';
import { createLogger } from '../src/logger.js';
import { SEND_QUEUE } from '../src/replies/send-message.queue.js';
import { WEBHOOK_QUEUE } from '../src/webhooks-in/inbox.enqueue.js';
import { createWorkspace } from '../src/workspaces/workspaces.service.js';
import { createEndpoint } from '../src/webhooks-out/endpoints.service.js';
import { deliverEvents } from '../src/webhooks-out/outbox.js';
import { whatsappTextBody } from './whatsapp-delivery.js';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '200' },
    rate: { type: 'string', default: '500' },
    workers: { type: 'string', default: '1' },
    sends: { type: 'string', default: '5000' },
    outbound: { type: 'string', default: '20000' },
    // The service's own default (info), as `npm start` runs it; `--log-level warn` for the
    // figures of earlier runs.
    'log-level': { type: 'string', default: 'info' },
    'ingest-only': { type: 'boolean', default: false },
    'outbound-only': { type: 'boolean', default: false },
    // `npm start` as a user runs it: one role-all process at default settings, under a burst
    // (beside the ceiling) and then an open-loop sender at --sustained deliveries/s.
    single: { type: 'boolean', default: false },
    sustained: { type: 'string', default: '2000' },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const RATE = Number(args.rate);
const ROUNDS = Number(args.rounds);
const WORKERS = Number(args.workers);
const SENDS = Number(args.sends);
const OUTBOUND = Number(args.outbound);
const LOG_LEVEL_OF_SERVICE = args['log-level'];
const WARMUP_SECONDS = 2;
const ROOT = path.resolve(import.meta.dirname, '..');
const SECRET = randomBytes(24).toString('hex');
const PHONE_NUMBER_ID = '106540352242922';
const say = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------- deliveries

const FILLER = 'Hello, I would like to know where my order is. '.repeat(22);
let sequence = 0;

/** A WhatsApp Cloud API text delivery of about 1.5 KB with a unique message id. */
function delivery(): string {
  sequence++;
  return whatsappTextBody({
    phoneNumberId: PHONE_NUMBER_ID,
    from: `4477009${String(sequence % 2000).padStart(5, '0')}`,
    name: `Customer ${sequence % 2000}`,
    id: `wamid.bench.${process.pid}.${sequence}.${randomBytes(6).toString('hex')}`,
    text: `${sequence}: ${FILLER}`,
  });
}

/** autocannon request whose body and signature are made fresh for every request. */
const signedRequest = {
  method: 'POST' as const,
  path: '/webhooks/whatsapp',
  setupRequest: (req: Record<string, unknown>) => {
    const body = delivery();
    return {
      ...req,
      body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(SECRET, body)}` },
    };
  },
};

// ---------------------------------------------------------------- processes

interface Server {
  child: ChildProcess;
  url: string;
  peakRssMb: () => number;
  stop(): Promise<void>;
}

function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function startProcess(args: string[], env: Record<string, string>, readyUrl: string | undefined, readyLine?: string): Promise<Server> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, LOG_LEVEL: LOG_LEVEL_OF_SERVICE, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // Only the tail is kept (for the error when a process fails to start): at info the service
  // writes a line per request, and the bench must not grow with them.
  let output = '';
  const keep = (d: Buffer) => (output = (output + d).slice(-65_536));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(child.pid!))), 200);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`process exited early:\n${output}`);
    if (Date.now() > deadline) throw new Error(`process not ready:\n${output}`);
    if (readyLine !== undefined && output.includes(readyLine)) break;
    if (readyUrl !== undefined) {
      const ok = await fetch(`${readyUrl}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    url: readyUrl ?? '',
    peakRssMb: () => Math.max(peak, rssMb(child.pid!)),
    async stop() {
      clearInterval(sampler);
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Extra node flags for the service processes, e.g. BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/** The heap limit `npm start` (and the Docker image) give the service, read from package.json so the two cannot drift. */
const START_NODE_OPTIONS = /--max-old-space-size=\d+/.exec(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start)?.[0] ?? '';

/** The service as it ships: compiled by `npm run build`, as `npm start` and the Docker image run it. */
const ENTRY = path.join(ROOT, 'dist/src/cli.js');

function serve(role: 'api' | 'worker' | 'all', databaseUrl: string, port: number, whatsapp: Record<string, string> = {}, env: Record<string, string> = {}) {
  return startProcess(
    [...NODE_FLAGS, ENTRY, 'serve', '--role', role],
    {
      NODE_OPTIONS: START_NODE_OPTIONS,
      ...env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET, ...whatsapp } }),
      // The worker announces readiness in its start line; it serves no requests to log.
      ...(role === 'worker' ? { LOG_LEVEL: 'info' } : {}),
    },
    role === 'worker' ? undefined : `http://127.0.0.1:${port}`,
    role === 'worker' ? 'inbox is running' : undefined,
  );
}

async function load(url: string, options: Partial<autocannon.Options> = {}) {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [signedRequest as unknown as autocannon.Request],
    ...options,
  });
}

// ---------------------------------------------------------------- database

async function count(db: Db, where: ReturnType<typeof sql>): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox WHERE ${where}`.execute(db);
  return rows[0]!.n;
}

/** Deliveries queued: each job of the webhook queue carries a batch of ids. */
async function queuedDeliveries(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(jsonb_array_length(data->'ids')), 0)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(db);
  return rows[0]!.n;
}

/** Deliveries whose job is not done: an index lookup, cheap enough to poll while a worker runs. */
async function pendingDeliveries(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(jsonb_array_length(data->'ids')), 0)::int AS n FROM pgboss.job
    WHERE name = ${WEBHOOK_QUEUE} AND state IN ('created', 'retry', 'active')`.execute(db);
  return rows[0]!.n;
}

/**
 * Polls `check` once a second, so the poll takes next to no CPU from the worker being
 * measured; the measured times come from the rows' own timestamps, not from when a poll noticed.
 */
async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for the queue to drain');
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Seconds from the first processed batch to the last, by the database's clock. A batch stamps
 * processed_at as it starts, so worker start-up is not counted, and neither is the last
 * batch's own few tens of milliseconds (under 1 % of a drain of several seconds).
 */
async function drainSecondsOf(db: Db): Promise<number> {
  const { rows } = await sql<{ seconds: number }>`
    SELECT extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds FROM webhook_inbox`.execute(db);
  return Math.max(rows[0]!.seconds, 0.001);
}

// ---------------------------------------------------------------- run

async function main() {
  say('building the service (npm run build)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  let stopPostgres = async () => {};
  let databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl === undefined) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-'));
    const pg = await startEmbeddedPostgres(dir); // default durability: fsync and synchronous commit on
    databaseUrl = pg.url;
    stopPostgres = async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const database = createDatabase(databaseUrl, { max: 2 });
  const servers: Server[] = [];
  try {
    await migrateToLatest(database.db);
    const workspace = await createWorkspace(database.db, 'Bench');
    const config = loadConfig({ INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) });
    // No credentials are set, so the key seals nothing.
    await createConnection({ db: database.db, config, secretKey: randomBytes(32) }, workspace.id, { integrationKey: 'whatsapp', externalAccountId: PHONE_NUMBER_ID, name: 'Bench line' });

    if (args.single) {
      const single = await measureSingle(databaseUrl, database.db);
      say(`single: burst ${single.burst.rps} req/s = ${(single.burst.ratio * 100).toFixed(1)} % of the ceiling (${single.burst.ceilingRps}), p99 ${single.burst.p99Ms} ms, caught up ${single.burst.catchUpSeconds} s after; sustained ${single.sustained.achievedRps} of ${single.sustained.targetRps}/s, ack p50 ${single.sustained.ackP50Ms} p99 ${single.sustained.ackP99Ms} max ${single.sustained.ackMaxMs} ms, received → processed p50 ${single.sustained.processedP50Ms} p99 ${single.sustained.processedP99Ms} ms, backlog ${single.sustained.backlogStart} → ${single.sustained.backlogEnd} (max ${single.sustained.backlogMax}), event-loop delay p99 ${single.sustained.eventLoopLagP99Ms} max ${single.sustained.eventLoopLagMaxMs} ms; RSS ${single.rssMb} MB`);
      if (args.json) process.stdout.write(`${JSON.stringify({ single })}\n`);
      return;
    }

    if (args['outbound-only']) {
      const outbound = await measureOutbound(databaseUrl, database.db, workspace.id);
      say(`outbound webhooks: 1 endpoint ${outbound.result.oneEndpoint.deliveriesPerSec}/s, 4 endpoints ${outbound.result.fourEndpoints.deliveriesPerSec}/s, event → receiver at 200/s p50 ${outbound.result.latency.p50Ms} ms p99 ${outbound.result.latency.p99Ms} ms, RSS ${Math.round(outbound.rssMb)} MB`);
      if (args.json) process.stdout.write(`${JSON.stringify({ outbound: outbound.result, rssMb: Math.round(outbound.rssMb) })}\n`);
      return;
    }

    // Ceiling and ingest run in alternating rounds against servers started once, so both
    // see the same machine: drift between rounds cancels out of each round's ratio.
    const ceilingPort = await freePort();
    const ceilingServer = await startProcess(['--import', 'tsx', path.join(ROOT, 'scripts/bench-ceiling.ts')], { PORT: String(ceilingPort), BENCH_SECRET: SECRET }, undefined, 'ceiling listening');
    servers.push(ceilingServer);
    const apiPort = await freePort();
    const api = await serve('api', databaseUrl, apiPort);
    servers.push(api);
    // A short unmeasured warm-up of both servers first, so JIT compilation, prepared
    // statements and pool connections are not charged to the first round of either.
    say(`warm-up: ceiling and ingest, ${WARMUP_SECONDS} s each`);
    await load(`http://127.0.0.1:${ceilingPort}`, { duration: WARMUP_SECONDS });
    const warmup = await load(api.url, { duration: WARMUP_SECONDS });
    const rounds: { ceiling: autocannon.Result; ingest: autocannon.Result }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      say(`1-2/4 round ${round}/${ROUNDS}: ceiling then ingest, ${CONNECTIONS} connections, ${SECONDS} s each`);
      const c = await load(`http://127.0.0.1:${ceilingPort}`);
      const i = await load(api.url);
      rounds.push({ ceiling: c, ingest: i });
    }
    await ceilingServer.stop();
    const ingestRss = api.peakRssMb();
    // Stopping the api lets requests still in flight finish, so the counts below are final.
    await api.stop();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const ceilingRps = median(rounds.map((r) => r.ceiling.requests.average));
    const ingestRps = median(rounds.map((r) => r.ingest.requests.average));
    const ratio = median(rounds.map((r) => r.ingest.requests.average / r.ceiling.requests.average));
    const ingestP99 = median(rounds.map((r) => r.ingest.latency.p99));
    const ingests = [warmup, ...rounds.map((r) => r.ingest)];
    const non2xx = ingests.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
    const acknowledged = ingests.reduce((n, r) => n + r['2xx'], 0);
    const rows = await count(database.db, sql`true`);
    const queued = await queuedDeliveries(database.db);

    if (args['ingest-only']) {
      say(`ceiling ${Math.round(ceilingRps)} req/s, ingest ${Math.round(ingestRps)} req/s, p99 ${ingestP99} ms, ratio ${(ratio * 100).toFixed(1)} %, rounds ${rounds.map((r) => (r.ingest.requests.average / r.ceiling.requests.average).toFixed(3)).join(' ')}, non-2xx ${non2xx}, rows ${rows}, queued ${queued}, api RSS ${Math.round(ingestRss)} MB`);
      return;
    }
    say(`3/4 process: ${WORKERS} worker process(es) drain ${rows} deliveries`);
    const workers = await Promise.all(Array.from({ length: WORKERS }, async () => serve('worker', databaseUrl, await freePort())));
    servers.push(...workers);
    await waitFor(async () => (await pendingDeliveries(database.db)) === 0, 300_000);
    const drainSeconds = await drainSecondsOf(database.db);
    const processed = await count(database.db, sql`status = 'processed'`);
    const workerRss = Math.max(...workers.map((w) => w.peakRssMb()));
    for (const w of workers) await w.stop();

    say(`4/4 latency: role all at ${RATE} deliveries/s for ${SECONDS} s`);
    const allPort = await freePort();
    const all = await serve('all', databaseUrl, allPort);
    servers.push(all);
    const since = new Date();
    const paced = await load(all.url, { connections: 50, overallRate: RATE });
    await waitFor(async () => (await pendingDeliveries(database.db)) === 0, 120_000);
    const { rows: lat } = await sql<{ p50: number; p99: number }>`
      SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p99
      FROM webhook_inbox WHERE created_at >= ${since} AND processed_at IS NOT NULL`.execute(database.db);
    const allRss = all.peakRssMb();
    await all.stop();

    say(`5/5 send: ${SENDS} replies through a loopback fake WhatsApp Cloud API, one role-all process`);
    const fake = await startFakeProviders();
    const key = await issueApiKey(database.db, workspace.id, 'bench', ['write']);
    const threadIds = (await sql<{ id: number }>`SELECT id FROM threads ORDER BY id LIMIT 500`.execute(database.db)).rows.map((r) => r.id);
    const sendPort = await freePort();
    const sender = await serve('all', databaseUrl, sendPort, { apiBaseUrl: fake.baseUrls.whatsapp, accessToken: 'bench-token' });
    servers.push(sender);
    const queuedLeft = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM messages WHERE direction = 'outbound' AND status = 'queued'`.execute(database.db)).rows[0]!.n;
    // a. The route: agents' POSTs, each its own durable commit.
    let next = 0;
    const posted = await autocannon({
      url: sender.url,
      connections: 20,
      amount: Math.min(SENDS, 1000),
      requests: [
        {
          method: 'POST',
          setupRequest: (req: Record<string, unknown>) => ({
            ...req,
            path: `/v1/threads/${threadIds[next++ % threadIds.length]}/messages`,
            body: JSON.stringify({ text: `Reply ${next}: thanks, your order is on its way.` }),
            headers: { 'content-type': 'application/json', 'x-api-key': key.key },
          }),
        } as unknown as autocannon.Request,
      ],
    });
    await waitFor(async () => (await queuedLeft()) === 0, 300_000);
    // b. The sender: a backlog of queued replies (written in one transaction, as a burst of
    // agents would leave it) drained by the worker, first sent to last sent.
    const { rows: marker } = await sql<{ id: number }>`SELECT coalesce(max(id), 0)::bigint AS id FROM messages`.execute(database.db);
    const boss = await startBoss(databaseUrl, createLogger('warn'), { max: 2, supervise: false });
    await database.db.transaction().execute(async (trx) => {
      const { rows: queued } = await sql<{ id: number }>`
        INSERT INTO messages (workspace_id, thread_id, connection_id, direction, text, status)
        SELECT t.workspace_id, t.id, t.connection_id, 'outbound', 'Reply ' || g || ': thanks, your order is on its way.', 'queued'
        FROM generate_series(1, ${SENDS}) g JOIN (SELECT *, row_number() OVER (ORDER BY id) - 1 AS n FROM threads) t ON t.n = g % ${threadIds.length}
        RETURNING id`.execute(trx);
      await boss.insert(SEND_QUEUE, queued.map((m) => ({ data: { messageId: m.id, attempt: 1 } })), { db: jobsIn(trx) });
    });
    await boss.stop({ graceful: false, close: true });
    await waitFor(async () => (await queuedLeft()) === 0, 300_000);
    const { rows: sendRows } = await sql<{ sent: number; seconds: number }>`
      SELECT count(*)::int AS sent, extract(epoch FROM max(updated_at) - min(updated_at))::float8 AS seconds
      FROM messages WHERE id > ${marker[0]!.id} AND direction = 'outbound' AND status = 'sent'`.execute(database.db);
    const senderRss = sender.peakRssMb();
    await sender.stop();
    await fake.close();
    const sent = sendRows[0]!.sent;
    const sendSeconds = Math.max(sendRows[0]!.seconds, 0.001);

    say(`6/6 outbound: ${OUTBOUND} webhook deliveries to one endpoint, then to four, then 200 events/s, one role-all process`);
    const outbound = await measureOutbound(databaseUrl, database.db, workspace.id);

    const result = {
      ceiling: { rps: Math.round(ceilingRps) },
      ingest: { rps: Math.round(ingestRps), p99Ms: ingestP99, non2xx, acknowledged, rows, queued },
      ratio: Number(ratio.toFixed(3)),
      rounds: rounds.map((r) => Number((r.ingest.requests.average / r.ceiling.requests.average).toFixed(3))),
      process: {
        workers: WORKERS,
        deliveriesPerSec: Math.round(processed / drainSeconds),
        drained: processed,
        seconds: Number(drainSeconds.toFixed(2)),
        p50LatencyMs: Math.round(lat[0]!.p50),
        p99LatencyMs: Math.round(lat[0]!.p99),
        pacedRps: Math.round(paced.requests.average),
      },
      send: { posted: posted['2xx'], postNon2xx: posted.non2xx, postRps: Math.round(posted.requests.average), postP99Ms: posted.latency.p99, sent, seconds: Number(sendSeconds.toFixed(2)), sendsPerSec: Math.round(sent / sendSeconds), providerRequests: fake.requests.length },
      outbound: outbound.result,
      rssMb: Math.round(Math.max(ingestRss, workerRss, allRss, senderRss, outbound.rssMb)),
    };

    const table = [
      ['ceiling (no-op route + HMAC)', `${result.ceiling.rps} req/s (median of ${ROUNDS} rounds)`],
      ['ingest POST /webhooks/whatsapp', `${result.ingest.rps} req/s, p99 ${result.ingest.p99Ms} ms, non-2xx ${result.ingest.non2xx}`],
      ['ingest / ceiling', `${(result.ratio * 100).toFixed(1)} % (median of rounds: ${result.rounds.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')})`],
      ['durable', `${acknowledged} acknowledged, ${rows} rows, ${queued} queued`],
      [`processing (${WORKERS} worker${WORKERS === 1 ? '' : 's'})`, `${result.process.deliveriesPerSec} deliveries/s (${processed} in ${result.process.seconds} s)`],
      [`latency at ${RATE}/s`, `p50 ${result.process.p50LatencyMs} ms, p99 ${result.process.p99LatencyMs} ms received → processed`],
      ['reply POSTs (20 connections)', `${result.send.postRps} req/s, p99 ${result.send.postP99Ms} ms (${result.send.posted} answered 202, ${result.send.postNon2xx} not)`],
      ['sending (1 process)', `${result.send.sendsPerSec} replies/s (${sent} queued replies sent in ${result.send.seconds} s)`],
      ['outbound webhooks, 1 endpoint', `${outbound.result.oneEndpoint.deliveriesPerSec} deliveries/s (${outbound.result.oneEndpoint.delivered} in ${outbound.result.oneEndpoint.seconds} s, at most 10 in flight)`],
      ['outbound webhooks, 4 endpoints', `${outbound.result.fourEndpoints.deliveriesPerSec} deliveries/s (${outbound.result.fourEndpoints.delivered} in ${outbound.result.fourEndpoints.seconds} s)`],
      ['event → receiver at 200/s', `p50 ${outbound.result.latency.p50Ms} ms, p99 ${outbound.result.latency.p99Ms} ms (${outbound.result.latency.events} events)`],
      ['peak server RSS', `${result.rssMb} MB (api ${Math.round(ingestRss)}, worker ${Math.round(workerRss)}, all ${Math.round(allRss)}, send ${Math.round(senderRss)}, outbound ${Math.round(outbound.rssMb)})`],
    ];
    const width = Math.max(...table.map(([k]) => k!.length));
    for (const [k, v] of table) process.stdout.write(`${k!.padEnd(width)}  ${v}\n`);
    if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    await database.close();
    await stopPostgres();
  }
}

/**
 * Phase 6. A loopback receiver answers 204 at once and notes when each delivery arrived. A
 * backlog is written in one transaction (what a burst of changes leaves) and timed from the
 * first arrival to the last; then single events are written at a steady rate, each in its own
 * transaction as a change would write it, and timed from their createdAt to their arrival.
 */
async function measureOutbound(databaseUrl: string, db: Db, workspaceId: number) {
  const { createServer } = await import('node:http');
  const arrivals: { at: number; createdAt: number; path: string }[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
      arrivals.push({ at: Date.now(), createdAt: Date.parse(JSON.parse(Buffer.concat(chunks).toString()).createdAt), path: req.url ?? '' });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const config = loadConfig({ INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
  const secretKey = randomBytes(32);
  const port = await freePort();
  const server = await serve('all', databaseUrl, port, {}, { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', INBOX_SECRET_KEY: secretKey.toString('hex') });
  const boss = await startBoss(databaseUrl, createLogger('warn'), { max: 2, supervise: false });
  const endpointIds: number[] = [];
  for (let i = 0; i < 4; i++) {
    const e = await createEndpoint({ db, config, secretKey, now: () => new Date() } as Parameters<typeof createEndpoint>[0], workspaceId, { url: `${receiverUrl}/e${i}`, events: ['message.created'] });
    endpointIds.push(e.id);
  }
  const event = (n: number) => ({ type: 'ping' as const, workspaceId, data: { n, text: 'Hello, I would like to know where my order is.' } });
  const backlog = async (endpoints: number[]) => {
    arrivals.length = 0;
    await db.transaction().execute((trx) => deliverEvents(boss, trx, Array.from({ length: OUTBOUND }, (_, n) => ({ event: event(n), endpointIds: [endpoints[n % endpoints.length]!] })), new Date()));
    await waitFor(async () => arrivals.length >= OUTBOUND, 600_000);
    const seconds = Math.max((arrivals.at(-1)!.at - arrivals[0]!.at) / 1000, 0.001);
    return { delivered: arrivals.length, seconds: Number(seconds.toFixed(2)), deliveriesPerSec: Math.round(arrivals.length / seconds) };
  };
  try {
    const oneEndpoint = await backlog(endpointIds.slice(0, 1));
    const fourEndpoints = await backlog(endpointIds);
    arrivals.length = 0;
    const paced = 200 * SECONDS;
    const started = Date.now();
    for (let n = 0; n < paced; n++) {
      const due = started + (n * 1000) / 200;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await db.transaction().execute((trx) => deliverEvents(boss, trx, [{ event: event(n), endpointIds: [endpointIds[n % 4]!] }], new Date()));
    }
    await waitFor(async () => arrivals.length >= paced, 120_000);
    const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
    return { result: { oneEndpoint, fourEndpoints, latency: { events: latencies.length, p50Ms: pct(0.5), p99Ms: pct(0.99) } }, rssMb: server.peakRssMb() };
  } finally {
    await boss.stop({ graceful: false, close: true });
    await server.stop();
    await new Promise((r) => receiver.close(r));
  }
}

/** Seconds of the sustained rate sent before measuring, so the sender's connections are open. */
const SUSTAIN_WARMUP_SECONDS = 3;

/** The service's event-loop delay since its previous scrape (prom-client restarts the histogram on each). */
async function eventLoopLag(url: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Math.round(Number(new RegExp(`^inbox_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000);
  return { p99Ms: value('p99'), maxMs: value('max') };
}

/**
 * `--single`: one role-all process at its default settings, as `npm start` runs it. Burst:
 * the ceiling and the process alternate for --rounds rounds of 200 connections (the process's
 * worker drains meanwhile), then the time until the backlog is processed. Sustained: an open
 * loop — requests sent at evenly spaced instants whatever the answers, so a stall shows up as
 * latency instead of slowing the sender — at --sustained/s for --seconds, with ack latency per
 * request, received → processed from the rows, and the backlog sampled every 100 ms.
 */
async function measureSingle(databaseUrl: string, db: Db) {
  const { Pool } = await import('undici');
  const ceilingPort = await freePort();
  const ceilingServer = await startProcess(['--import', 'tsx', path.join(ROOT, 'scripts/bench-ceiling.ts')], { PORT: String(ceilingPort), BENCH_SECRET: SECRET }, undefined, 'ceiling listening');
  const port = await freePort();
  const all = await serve('all', databaseUrl, port);
  try {
    await load(`http://127.0.0.1:${ceilingPort}`, { duration: WARMUP_SECONDS });
    await load(all.url, { duration: WARMUP_SECONDS });
    await waitFor(async () => (await pendingDeliveries(db)) === 0, 300_000);
    const rounds: { c: autocannon.Result; i: autocannon.Result }[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      say(`single burst round ${r}/${ROUNDS}: ceiling then the role-all process, ${CONNECTIONS} connections, ${SECONDS} s each`);
      rounds.push({ c: await load(`http://127.0.0.1:${ceilingPort}`), i: await load(all.url) });
    }
    const burstEnd = Date.now();
    await waitFor(async () => (await pendingDeliveries(db)) === 0, 600_000);
    const catchUpSeconds = (Date.now() - burstEnd) / 1000;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

    const target = Number(args.sustained);
    say(`single sustained: open loop at ${target}/s, ${SUSTAIN_WARMUP_SECONDS} s to open connections, then ${SECONDS} s measured`);
    const pool = new Pool(all.url, { connections: 512, pipelining: 1 });
    const acks: number[] = [];
    let failed = 0;
    let since = new Date();
    const backlog: number[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        backlog.push(await pendingDeliveries(db));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const inflight: Promise<void>[] = [];
    const started = performance.now();
    const warm = target * SUSTAIN_WARMUP_SECONDS;
    const total = warm + target * SECONDS;
    let measuredFrom = 0;
    let backlogFrom = 0;
    let lagBefore: Promise<unknown> = Promise.resolve();
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / target;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      if (n === warm) {
        // The measured window starts: the service's event-loop delay histogram restarts with this scrape.
        since = new Date();
        measuredFrom = performance.now();
        backlogFrom = backlog.length;
        lagBefore = eventLoopLag(all.url);
      }
      const counted = n >= warm;
      const body = delivery();
      const sent = performance.now();
      inflight.push(
        pool
          .request({ method: 'POST', path: '/webhooks/whatsapp', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(SECRET, body)}` } })
          .then(async (res) => {
            await res.body.dump();
            if (!counted) return;
            if (res.statusCode === 200) acks.push(performance.now() - sent);
            else failed++;
          }, () => void (counted && failed++)),
      );
    }
    await Promise.all(inflight);
    const elapsed = (performance.now() - measuredFrom) / 1000;
    const lag = await lagBefore.then(() => eventLoopLag(all.url));
    const backlogEnd = backlog.at(-1) ?? 0;
    await pool.close();
    await waitFor(async () => (await pendingDeliveries(db)) === 0, 300_000);
    sampling = false;
    await sampler;
    const measuredBacklog = backlog.slice(backlogFrom);
    const { rows: lat } = await sql<{ p50: number; p99: number }>`
      SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p50,
             percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p99
      FROM webhook_inbox WHERE created_at >= ${since} AND processed_at IS NOT NULL`.execute(db);
    acks.sort((a, b) => a - b);
    const pct = (p: number) => Math.round(acks[Math.min(acks.length - 1, Math.floor(p * acks.length))] ?? 0);
    return {
      burst: {
        ceilingRps: Math.round(median(rounds.map((r) => r.c.requests.average))),
        rps: Math.round(median(rounds.map((r) => r.i.requests.average))),
        ratio: Number(median(rounds.map((r) => r.i.requests.average / r.c.requests.average)).toFixed(3)),
        p99Ms: median(rounds.map((r) => r.i.latency.p99)),
        non2xx: rounds.reduce((n, r) => n + r.i.non2xx + r.i.errors, 0),
        catchUpSeconds: Number(catchUpSeconds.toFixed(1)),
      },
      sustained: {
        targetRps: target,
        achievedRps: Math.round(acks.length / elapsed),
        acknowledged: acks.length,
        failed,
        ackP50Ms: pct(0.5),
        ackP99Ms: pct(0.99),
        ackMaxMs: Math.round(acks.at(-1) ?? 0),
        processedP50Ms: Math.round(lat[0]!.p50),
        processedP99Ms: Math.round(lat[0]!.p99),
        backlogStart: measuredBacklog[0] ?? 0,
        backlogEnd,
        backlogMax: Math.max(0, ...measuredBacklog),
        eventLoopLagP99Ms: lag.p99Ms,
        eventLoopLagMaxMs: lag.maxMs,
      },
      rssMb: Math.round(all.peakRssMb()),
    };
  } finally {
    await ceilingServer.stop();
    await all.stop();
  }
}

await main();
process.exit(0);
