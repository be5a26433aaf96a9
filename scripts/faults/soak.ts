// Part 6: a long run of mixed load on one `npm start`-style process (role all): paced signed
// deliveries, agents listing threads and contacts, replies, and realtime sockets. Sampled per
// window: RSS, open file descriptors, ingest p99 and queue depth. 2 minutes by default,
// `--soak-minutes 10` for the full soak.
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { backlog, checkExactlyOnce, checkReplies, drained, freshDatabase } from '../../harness/checks.js';
import { ingestLoad, listen, replyTraffic, seedThreads } from '../../harness/load.js';
import { pause, provisionTenant, startService, type Tenant } from '../../harness/service.js';
import type { FaultPart } from './part.js';

const WINDOW_MS = 20_000;
const RATE = 200;

function openFds(pid: number | undefined): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/** Agents reading lists, each request timed; latencies are taken per window. */
function listReaders(url: string, tenant: Tenant, concurrency: number) {
  const latencies: number[] = [];
  let errors = 0;
  let running = true;
  const paths = ['/v1/threads?limit=50', '/v1/contacts?limit=50', '/v1/threads?limit=10'];
  const reader = async (r: number) => {
    for (let i = r; running; i++) {
      const at = performance.now();
      const res = await fetch(`${url}${paths[i % paths.length]}`, { headers: { 'x-api-key': tenant.apiKey } }).catch(() => undefined);
      if (res?.status === 200) latencies.push(performance.now() - at);
      else errors++;
      await res?.body?.cancel();
      await pause(200);
    }
  };
  const readers = Array.from({ length: concurrency }, (_, r) => reader(r));
  return {
    take: () => latencies.splice(0),
    get errors() {
      return errors;
    },
    stop: async () => {
      running = false;
      await Promise.all(readers);
    },
  };
}

const p99 = (xs: number[]) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!);

export const soakPart: FaultPart = {
  key: 'soak',
  title: '6. soak: mixed load on one process',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_soak');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const svc = await startService({ role: 'all', databaseUrl: url, whatsappApiBaseUrl: fake.baseUrls.whatsapp });
    try {
      const tenant = await provisionTenant(svc.url);
      const threadIds = await seedThreads(svc.url, db, 50);
      const sockets = await Promise.all(Array.from({ length: 5 }, () => listen(svc.url, tenant.accessToken)));
      const windows = Math.max(3, Math.round((options.soakMinutes * 60_000) / WINDOW_MS));
      report.did(
        `role all for ${((windows * WINDOW_MS) / 60_000).toFixed(1)} min: ${RATE} signed deliveries/s (50 connections), 4 agents listing, 2 replying, 5 realtime sockets; sampled every ${WINDOW_MS / 1000} s`,
      );
      const readers = listReaders(svc.url, tenant, 4);
      const replies = replyTraffic([svc.url], tenant, threadIds, { concurrency: 2, pauseMs: 250 });
      const acknowledged = new Set<string>();
      const samples: { rss: number; fds: number; ingestP99: number; listP99: number; depth: number; rps: number }[] = [];
      for (let w = 0; w < windows; w++) {
        const load = ingestLoad([svc.url], { connections: 50, rate: RATE });
        let depth = 0;
        // Descriptors are sampled while the window's load runs, so its 50 connections are open
        // in every sample (sampled after the load stopped, they were half closed or not).
        const fds: number[] = [];
        const until = Date.now() + WINDOW_MS;
        while (Date.now() < until) {
          const b = await backlog(db);
          depth = Math.max(depth, b.jobs);
          fds.push(openFds(svc.child.pid));
          await pause(1000);
        }
        const result = await load.stop();
        for (const id of load.acknowledged) acknowledged.add(id);
        const sample = {
          rss: Math.round(svc.rssMb()),
          fds: fds.sort((a, b) => a - b)[Math.floor(fds.length / 2)]!,
          ingestP99: result.latency.p99,
          listP99: Math.round(p99(readers.take())),
          depth,
          rps: Math.round(result.requests.average),
        };
        samples.push(sample);
        report.did(
          `window ${w + 1}/${windows}: ${sample.rps} deliveries/s, ingest p99 ${sample.ingestP99} ms, list p99 ${sample.listP99} ms, RSS ${sample.rss} MB, ${sample.fds} open descriptors, queue depth ≤ ${sample.depth}`,
        );
      }
      await readers.stop();
      await replies.stop();
      const seconds = await drained(db, 120_000);
      report.did(`load stopped; the queue drained in ${seconds.toFixed(1)} s`);

      // Pools and caches fill during the first half; flat means the end is no higher than that.
      const head = samples.slice(0, Math.ceil(samples.length / 2));
      const base = { rss: Math.max(...head.map((s) => s.rss)), fds: Math.max(...head.map((s) => s.fds)) };
      const last = samples.at(-1)!;
      const tail = samples.slice(Math.floor(samples.length / 2));
      report.figure('RSS', `${samples.map((s) => s.rss).join(' → ')} MB`);
      report.figure('ingest p99', `${samples.map((s) => s.ingestP99).join(', ')} ms`);
      report.figure('queue depth (max per window)', samples.map((s) => s.depth).join(', '));
      report.check('RSS flat', last.rss <= base.rss * 1.25 + 20, `at most ${base.rss} MB in the first half, ${last.rss} MB at the end`);
      report.check(
        'open handles flat',
        last.fds <= base.fds + 20,
        `at most ${base.fds} open descriptors in the first half (median per window), ${last.fds} at the end`,
      );
      const p99Bound = Math.max(
        3 *
          Math.max(
            ...samples
              .slice(1)
              .map((s) => s.ingestP99)
              .slice(0, 2),
          ),
        250,
      );
      report.check(
        'ingest p99 stable',
        tail.every((s) => s.ingestP99 <= p99Bound),
        `p99 per window ${samples.map((s) => s.ingestP99).join(', ')} ms (bound ${p99Bound} ms)`,
      );
      const depthBound = RATE * 10;
      report.check(
        'queue depth bounded',
        samples.every((s) => s.depth <= depthBound),
        `max ${Math.max(...samples.map((s) => s.depth))} jobs waiting (bound ${depthBound}, 10 s of arrivals)`,
      );
      report.check('lists answered', readers.errors === 0, `${readers.errors} list requests failed`);
      await checkExactlyOnce(report, db, acknowledged);
      await checkReplies(report, db, replies.accepted, fake.sentAt);
      const events = sockets.map((s) => s.created.size);
      report.check(
        'every socket stayed live',
        events.every((n) => n === events[0] && n > 0),
        `message.created per socket: ${events.join(', ')}`,
      );
      for (const s of sockets) s.close();
    } finally {
      await svc.stop();
      await db.end();
    }
  },
};
