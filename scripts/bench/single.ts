// `--single`: one role-all service at its default settings, as `npm start` runs it (the api
// process and its worker process; RSS is both's, the event-loop delay the api's). Burst:
// the ceiling and the process alternate for --rounds rounds of --connections (each round's
// ceiling once the last burst is processed), then the time until the last burst is processed. Sustained: an open
// loop — requests sent at evenly spaced instants whatever the answers, so a stall shows up as
// latency instead of slowing the sender — at --sustained/s for --seconds, with ack latency per
// request, received → processed from the rows, and the backlog sampled every 100 ms.
import { Pool } from 'undici';
import { childrenOf } from '../../harness/service.js';
import type { Db } from '../../src/db/database.js';
import { anyMessageUnindexed, pendingDeliveries, postmasterPid, processedLatency, walTotals } from './bench.queries.js';
import { startCeiling } from './ceiling.js';
import {
  BURST_BODIES_PER_SECOND,
  burst,
  cpuShare,
  type Measured,
  median,
  say,
  serve,
  signedDeliveries,
  WARMUP_SECONDS,
  waitFor,
} from './common.js';
import { postgresCpuMs, processCpuMs } from './cpu.js';
import type { BenchOptions } from './options.js';

/** Seconds of the sustained rate sent before measuring, so the sender's connections are open. */
const SUSTAIN_WARMUP_SECONDS = 3;

/**
 * The acknowledging process's event-loop delay since its previous scrape (prom-client restarts
 * the histogram on each): the unlabelled series, the worker process's carries `role="worker"`.
 */
async function eventLoopLag(url: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) =>
    Math.round(Number(new RegExp(`^nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000);
  return { p99Ms: value('p99'), maxMs: value('max') };
}

/** Deliveries the role-all process (its worker process's, relayed) has processed so far. */
async function processedSoFar(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^inbox_webhook_processing_total\{[^}]*outcome="processed"[^}]*\} (\S+)$/m.exec(text)?.[1] ?? 0);
}

/**
 * Where a burst's CPU went: the acknowledging process, its worker process and PostgreSQL, in
 * µs per acknowledged request, and how many deliveries the worker processed meanwhile (its
 * batches wait while ingestion is busy, until their oldest delivery is 10 s old).
 */
function burstCpu(apiPid: number | undefined, postgresPid: number) {
  const workerPid = () => childrenOf(apiPid)[0];
  const at = () => ({ api: processCpuMs(apiPid), worker: processCpuMs(workerPid()), postgres: postgresCpuMs(postgresPid) });
  const before = at();
  return (acknowledged: number) => {
    const now = at();
    const per = (k: 'api' | 'worker' | 'postgres') => Math.round(((now[k] - before[k]) * 1000) / Math.max(acknowledged, 1));
    return { apiUs: per('api'), workerUs: per('worker'), postgresUs: per('postgres') };
  };
}

export async function measureSingle(options: BenchOptions, databaseUrl: string, db: Db) {
  const ceiling = await startCeiling();
  const all = await serve(options, 'all', databaseUrl);
  const postgres = await postmasterPid(db);
  try {
    await ceiling.measure(options.connections, WARMUP_SECONDS);
    await burst(all.url, signedDeliveries(BURST_BODIES_PER_SECOND * WARMUP_SECONDS), {
      connections: options.connections,
      duration: WARMUP_SECONDS,
    });
    await waitFor('the warm-up to be processed', async () => (await pendingDeliveries(db)) === 0, 300_000);
    // From the bursts on: whether checkpoints (and the full-page images after each) fell in them.
    const walBefore = await walTotals(db);
    const rounds: { c: Measured; i: Measured }[] = [];
    for (let r = 1; r <= options.rounds; r++) {
      say(
        `single burst round ${r}/${options.rounds}: ceiling then the role-all process, ${options.connections} connections, ${options.seconds} s each`,
      );
      // The ceiling on a quiet machine: the worker process processes the last round's burst and
      // indexes its messages for search first, else the ceiling shares the cores with that work
      // and reads half of itself (the ratio then twice what it is).
      if (r > 1) {
        await waitFor('the last burst to be processed', async () => (await pendingDeliveries(db)) === 0, 600_000);
        await waitFor('its messages to be indexed for search', async () => !(await anyMessageUnindexed(db)), 600_000);
      }
      const c = await ceiling.measure(options.connections, options.seconds);
      const bodies = signedDeliveries(BURST_BODIES_PER_SECOND * options.seconds);
      const processedBefore = await processedSoFar(all.url);
      const cpu = burstCpu(all.child.pid, postgres);
      const i = await burst(all.url, bodies, { connections: options.connections, duration: options.seconds });
      const acknowledged = i.result['2xx'];
      const split = cpu(acknowledged);
      const processed = (await processedSoFar(all.url)) - processedBefore;
      say(
        `  ceiling ${Math.round(c.result.requests.average)} req/s (generator ${Math.round(c.generatorCpu * 100)} % of a core), role all ${Math.round(i.result.requests.average)} req/s (generator ${Math.round(i.generatorCpu * 100)} %)`,
      );
      say(
        `  role all's CPU per acknowledged request: api ${split.apiUs} µs, worker ${split.workerUs} µs, PostgreSQL ${split.postgresUs} µs; ${processed} of ${acknowledged} deliveries processed during the burst`,
      );
      rounds.push({ c, i });
    }
    await ceiling.stop();
    const burstEnd = Date.now();
    await waitFor('the burst to be processed', async () => (await pendingDeliveries(db)) === 0, 600_000);
    const catchUpSeconds = (Date.now() - burstEnd) / 1000;

    const target = options.sustained;
    const warm = target * SUSTAIN_WARMUP_SECONDS;
    const total = warm + target * options.seconds;
    const bodies = signedDeliveries(total);
    say(`single sustained: open loop at ${target}/s, ${SUSTAIN_WARMUP_SECONDS} s to open connections, then ${options.seconds} s measured`);
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
    // The sampler stops however the phase ends: left running past a failure, its next read
    // hit the closed pool and its rejection hid the failure's own error.
    let lagBefore: Promise<unknown> = Promise.resolve();
    let measuredFrom = 0;
    let backlogFrom = 0;
    let backlogEnd = 0;
    let lag: Awaited<ReturnType<typeof eventLoopLag>>;
    let sustainedGeneratorCpu = 0;
    let elapsed = 0;
    try {
      const inflight: Promise<void>[] = [];
      const started = performance.now();
      let share = cpuShare();
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
          share = cpuShare();
        }
        const counted = n >= warm;
        const { body, headers } = bodies[n]!;
        const sent = performance.now();
        inflight.push(
          pool.request({ method: 'POST', path: '/webhooks/whatsapp', body, headers }).then(
            async (res) => {
              await res.body.dump();
              if (!counted) return;
              if (res.statusCode === 200) acks.push(performance.now() - sent);
              else failed++;
            },
            () => void (counted && failed++),
          ),
        );
      }
      await Promise.all(inflight);
      sustainedGeneratorCpu = share();
      elapsed = (performance.now() - measuredFrom) / 1000;
      lag = await lagBefore.then(() => eventLoopLag(all.url));
      backlogEnd = backlog.at(-1) ?? 0;
      await pool.close();
      await waitFor('the sustained deliveries to be processed', async () => (await pendingDeliveries(db)) === 0, 300_000);
    } finally {
      sampling = false;
      await sampler.catch(() => {});
    }
    const measuredBacklog = backlog.slice(backlogFrom);
    const lat = await processedLatency(db, since);
    const walAfter = await walTotals(db);
    const wal =
      walBefore && walAfter
        ? {
            gb: Number(((walAfter.bytes - walBefore.bytes) / 1e9).toFixed(2)),
            fullPageImages: walAfter.fullPageImages - walBefore.fullPageImages,
            checkpointsRequested: walAfter.checkpointsRequested - walBefore.checkpointsRequested,
            checkpointsTimed: walAfter.checkpointsTimed - walBefore.checkpointsTimed,
          }
        : undefined;
    acks.sort((a, b) => a - b);
    const pct = (p: number) => Math.round(acks[Math.min(acks.length - 1, Math.floor(p * acks.length))] ?? 0);
    return {
      burst: {
        ceilingRps: Math.round(median(rounds.map((r) => r.c.result.requests.average))),
        ceilingGeneratorCpu: median(rounds.map((r) => r.c.generatorCpu)),
        rps: Math.round(median(rounds.map((r) => r.i.result.requests.average))),
        generatorCpu: median(rounds.map((r) => r.i.generatorCpu)),
        ratio: Number(median(rounds.map((r) => r.i.result.requests.average / r.c.result.requests.average)).toFixed(3)),
        p99Ms: median(rounds.map((r) => r.i.result.latency.p99)),
        non2xx: rounds.reduce((n, r) => n + r.i.result.non2xx + r.i.result.errors, 0),
        repeated: rounds.reduce((n, r) => n + r.i.repeated, 0),
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
        processedP50Ms: lat.p50,
        processedP99Ms: lat.p99,
        backlogStart: measuredBacklog[0] ?? 0,
        backlogEnd,
        backlogMax: Math.max(0, ...measuredBacklog),
        eventLoopLagP99Ms: lag.p99Ms,
        eventLoopLagMaxMs: lag.maxMs,
        generatorCpu: sustainedGeneratorCpu,
      },
      rssMb: Math.round(all.peakRssMb()),
      wal,
    };
  } finally {
    await ceiling.stop();
    await all.stop();
  }
}
