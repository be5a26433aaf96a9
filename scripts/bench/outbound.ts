// Phase 6. A loopback receiver answers 204 at once and notes when each delivery arrived. A
// backlog is written in one transaction (what a burst of changes leaves) and timed from the
// first arrival to the last, to one endpoint and then to four; then single events are written
// at a steady 200/s, each in its own transaction as a change would write it, and timed from
// their createdAt to their arrival. Last, a slow receiver (each answer after SLOW_MS) is sent
// SLOW_EVENTS events, each its own commit as one change at a time writes them, and timed from
// the first arrival to the last, with the most it had in flight at once.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { systemTrail } from '../../src/audit/audit.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createLogger } from '../../src/logger.js';
import { createEndpoint } from '../../src/webhooks-out/endpoints.service.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { serve, waitFor } from './common.js';
import { postgresCpuMs, serviceCpuMs } from './cpu.js';
import type { BenchOptions } from './options.js';

const SLOW_MS = 250;
const SLOW_EVENTS = 100;

/**
 * `root`: the checkout whose service runs (this one by default; --compare passes the ref's).
 * `postmasterPid`: with it, PostgreSQL's CPU over each backlog is read too.
 */
export async function measureOutbound(
  options: BenchOptions,
  databaseUrl: string,
  db: Db,
  workspaceId: number,
  at: { root?: string; postmasterPid?: number } = {},
) {
  const arrivals: { at: number; createdAt: number; path: string }[] = [];
  const slow = { inFlight: 0, peak: 0 };
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        arrivals.push({
          at: Date.now(),
          createdAt: Date.parse(JSON.parse(Buffer.concat(chunks).toString()).createdAt),
          path: req.url ?? '',
        });
        if (req.url !== '/slow') return res.writeHead(204).end();
        slow.peak = Math.max(slow.peak, ++slow.inFlight);
        setTimeout(() => {
          slow.inFlight--;
          res.writeHead(204).end();
        }, SLOW_MS);
      });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const config = loadConfig({ INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' });
  const secretKey = randomBytes(32);
  const server = await serve(options, 'all', databaseUrl, {
    ...(at.root ? { root: at.root } : {}),
    env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', INBOX_SECRET_KEY: secretKey.toString('hex') },
  });
  const boss = await startBoss(databaseUrl, createLogger('warn'), { max: 2, supervise: false });
  const endpointIds: number[] = [];
  for (let i = 0; i < 4; i++) {
    const e = await createEndpoint(
      { db, config, secretKey, now: () => new Date() } as Parameters<typeof createEndpoint>[0],
      workspaceId,
      {
        url: `${receiverUrl}/e${i}`,
        events: ['message.created'],
      },
      systemTrail(workspaceId),
    );
    endpointIds.push(e.id);
  }
  const slowEndpoint = (
    await createEndpoint(
      { db, config, secretKey, now: () => new Date() } as Parameters<typeof createEndpoint>[0],
      workspaceId,
      { url: `${receiverUrl}/slow`, events: ['message.created'] },
      systemTrail(workspaceId),
    )
  ).id;
  const event = (n: number) => ({
    type: 'ping' as const,
    workspaceId,
    data: { n, text: 'Hello, I would like to know where my order is.' },
  });
  const backlog = async (endpoints: number[]) => {
    arrivals.length = 0;
    await db.transaction().execute((trx) =>
      deliverEvents(
        boss,
        trx,
        Array.from({ length: options.outbound }, (_, n) => ({ event: event(n), endpointIds: [endpoints[n % endpoints.length]!] })),
        new Date(),
      ),
    );
    const serviceCpu = serviceCpuMs(server.child.pid);
    const pgCpu = at.postmasterPid ? postgresCpuMs(at.postmasterPid) : 0;
    await waitFor('the outbound backlog to arrive', async () => arrivals.length >= options.outbound, 600_000);
    const seconds = Math.max((arrivals.at(-1)!.at - arrivals[0]!.at) / 1000, 0.001);
    const perDelivery = (ms: number) => Math.round((ms * 1000) / arrivals.length);
    return {
      delivered: arrivals.length,
      seconds: Number(seconds.toFixed(2)),
      deliveriesPerSec: Math.round(arrivals.length / seconds),
      /** The service's CPU (its worker child's with it) from the backlog's commit to its last arrival, per delivery. */
      serviceUsPerDelivery: perDelivery(serviceCpuMs(server.child.pid) - serviceCpu),
      /** PostgreSQL's over the same window (0 without a postmaster pid). */
      postgresUsPerDelivery: at.postmasterPid ? perDelivery(postgresCpuMs(at.postmasterPid) - pgCpu) : 0,
    };
  };
  try {
    const oneEndpoint = await backlog(endpointIds.slice(0, 1));
    const fourEndpoints = await backlog(endpointIds);
    arrivals.length = 0;
    const paced = 200 * options.seconds;
    const started = Date.now();
    for (let n = 0; n < paced; n++) {
      const due = started + (n * 1000) / 200;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await db
        .transaction()
        .execute((trx) => deliverEvents(boss, trx, [{ event: event(n), endpointIds: [endpointIds[n % 4]!] }], new Date()));
    }
    await waitFor('the paced events to arrive', async () => arrivals.length >= paced, 120_000);
    const latencies = arrivals.map((a) => a.at - a.createdAt).sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;

    arrivals.length = 0;
    for (let n = 0; n < SLOW_EVENTS; n++)
      await db.transaction().execute((trx) => deliverEvents(boss, trx, [{ event: event(n), endpointIds: [slowEndpoint] }], new Date()));
    await waitFor('the slow receiver’s events to arrive', async () => arrivals.length >= SLOW_EVENTS, 600_000);
    const slowSeconds = Math.max((arrivals.at(-1)!.at - arrivals[0]!.at) / 1000, 0.001);
    const slowReceiver = {
      answerMs: SLOW_MS,
      delivered: arrivals.length,
      seconds: Number(slowSeconds.toFixed(2)),
      deliveriesPerSec: Number((arrivals.length / slowSeconds).toFixed(1)),
      peakInFlight: slow.peak,
    };
    return {
      result: { oneEndpoint, fourEndpoints, latency: { events: latencies.length, p50Ms: pct(0.5), p99Ms: pct(0.99) }, slowReceiver },
      rssMb: server.peakRssMb(),
    };
  } finally {
    await boss.stop({ graceful: false, close: true });
    await server.stop();
    await new Promise((r) => receiver.close(r));
  }
}

/** The slow receiver's figures as one line. */
export function slowLine(r: { answerMs: number; delivered: number; seconds: number; deliveriesPerSec: number; peakInFlight: number }) {
  return `a receiver answering in ${r.answerMs} ms, one event per commit: ${r.deliveriesPerSec} deliveries/s (${r.delivered} in ${r.seconds} s), at most ${r.peakInFlight} in flight`;
}

/** A run's figures as one line. */
export function outboundLine(o: Awaited<ReturnType<typeof measureOutbound>>['result'] & { rssMb: number }) {
  const cpu = (b: { serviceUsPerDelivery: number; postgresUsPerDelivery: number }) =>
    `service ${b.serviceUsPerDelivery} µs${b.postgresUsPerDelivery ? ` + Postgres ${b.postgresUsPerDelivery} µs` : ''} per delivery`;
  return `1 endpoint ${o.oneEndpoint.deliveriesPerSec}/s (${cpu(o.oneEndpoint)}), 4 endpoints ${o.fourEndpoints.deliveriesPerSec}/s (${cpu(o.fourEndpoints)}), event → receiver at 200/s p50 ${o.latency.p50Ms} ms p99 ${o.latency.p99Ms} ms, ${slowLine(o.slowReceiver)}, RSS ${o.rssMb} MB`;
}
