// `--compare <git-ref>`: this checkout's build against another commit's, in one run of one
// driver (this checkout's), alternated round by round so a machine that drifts drifts for both.
// The ref is checked out into a temporary git worktree and built there with its own
// dependencies; only its service (dist/src/cli.js serve) and its migrations run, each build on
// a fresh database of its own. Each round, for each build: the no-op HMAC ceiling, then the
// ingest burst against `--role api`, then a `--role worker` draining what the burst stored,
// with the CPU of the service process and of PostgreSQL over each window.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { provisionTenant, ROOT } from '../../harness/service.js';
import type { Db } from '../../src/db/database.js';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { anyMessageUnindexed, drainSeconds, inboxRows, webhookJobs } from './bench.queries.js';
import { type Ceiling, startCeiling } from './ceiling.js';
import {
  BURST_BODIES_PER_SECOND,
  burst,
  median,
  POSTGRES_FLAGS,
  say,
  serve,
  signedDeliveries,
  WARMUP_SECONDS,
  waitFor,
  waitForDrain,
} from './common.js';
import { cpuByKindSince, postgresCpuByKind, postgresCpuMs, processCpuMs } from './cpu.js';
import type { BenchOptions } from './options.js';
import { measureOutbound, outboundLine } from './outbound.js';

/**
 * BENCH_SETUP_SQL: SQL run on this build's databases once its migrations have run, to measure
 * a schema change (an index dropped, a storage parameter) before a migration is written for it.
 */
export const SETUP_SQL = process.env.BENCH_SETUP_SQL || undefined;

/** One build under comparison: where its checkout is and what to call it. */
export interface Build {
  key: 'this' | 'ref';
  label: string;
  root: string;
  /** CPU ms a worker of this build and Postgres spend starting on an empty inbox. */
  startCpu?: { workerMs: number; postgresMs: number };
}

/** What one build did in one round. */
export interface RunFigures {
  ceilingRps: number;
  ceilingUsPerRequest: number;
  ingestRps: number;
  ingestRatio: number;
  ingestP99Ms: number;
  acknowledged: number;
  non2xx: number;
  generatorCpu: number;
  drained: number;
  drainSeconds: number;
  drainPerSec: number;
  /** The api process's CPU over the ingest burst, per delivery it acknowledged. */
  apiUsPerAck: number;
  /** PostgreSQL's CPU over the ingest burst, per acknowledged delivery. */
  pgIngestUsPerAck: number;
  /** Acknowledged deliveries per group commit (a commit queues one job): what a commit's cost is shared by. */
  deliveriesPerCommit: number;
  /** The same by kind of PostgreSQL process (backends, autovacuum, walwriter, …), µs per ack. */
  pgIngestByKind: Record<string, number>;
  /** The worker process's CPU from ready to drained, per delivery processed meanwhile. */
  workerUsPerDelivery: number;
  /** PostgreSQL's CPU over the same window, per delivery processed. */
  pgDrainUsPerDelivery: number;
  /**
   * The same by kind of PostgreSQL process, µs per delivery: whether a difference is the
   * statements (backends) or what follows them (autovacuum, the WAL writer, the checkpointer).
   * The worker's start is not taken off these, as it is off pgDrainUsPerDelivery.
   */
  pgDrainByKind: Record<string, number>;
  apiRssMb: number;
  workerRssMb: number;
  /**
   * Once drained, the worker's search indexer parsing the messages the drain stored (a build
   * with the deferred vector): worker + PostgreSQL CPU per delivery, outside the drain's window.
   */
  indexUsPerDelivery: number;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const run = (cwd: string, command: string, args: string[]) => execFileSync(command, args, { cwd, stdio: ['ignore', 2, 2] });

/** `cp -al` of node_modules: instant, no bytes copied; false where hard links cannot be made. */
function linkedCopy(from: string, to: string): boolean {
  try {
    execFileSync('cp', ['-al', path.join(from, 'node_modules'), path.join(to, 'node_modules')], { stdio: 'ignore' });
    return true;
  } catch {
    rmSync(path.join(to, 'node_modules'), { recursive: true, force: true });
    return false;
  }
}

/**
 * The ref checked out into a temporary worktree and built: `npm ci` there, unless its lock file
 * is this checkout's (then this node_modules is copied in as hard links), and its own `npm run build`.
 */
export async function prepareRef(ref: string): Promise<{ build: Build; remove: () => Promise<void> }> {
  const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), `inbox-bench-ref-${sha.slice(0, 12)}-`));
  let added = false;
  const remove = async () => {
    if (added) {
      try {
        git('worktree', 'remove', '--force', dir);
      } catch {
        // already gone: prune forgets it below
      }
    }
    await rm(dir, { recursive: true, force: true });
    git('worktree', 'prune');
  };
  try {
    say(`compare: checking ${ref} (${sha.slice(0, 12)}) out into ${dir}`);
    git('worktree', 'add', '--detach', dir, sha);
    added = true;
    const lock = (root: string) => readFileSync(path.join(root, 'package-lock.json'), 'utf8');
    // A hard-linked copy, not a symlink: the build's declarations must resolve packages inside
    // the worktree (through a symlink tsc names this checkout's paths and refuses to emit).
    if (existsSync(path.join(dir, 'package-lock.json')) && lock(dir) === lock(ROOT) && linkedCopy(ROOT, dir)) {
      say('compare: same lock file, a hard-linked copy of this node_modules');
    } else {
      say('compare: the lock files differ, npm ci in the ref');
      run(dir, 'npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']);
    }
    say('compare: building the ref (npm run build)');
    run(dir, 'npm', ['run', 'build', '--silent']);
    return { build: { key: 'ref', label: `${ref} (${sha.slice(0, 12)})`, root: dir }, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/** This checkout's label: its commit, and whether the build holds changes not committed. */
export function thisLabel(): string {
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
  return `this (${git('rev-parse', '--short=12', 'HEAD')}${dirty ? ' + uncommitted changes' : ''}${SETUP_SQL ? `, with BENCH_SETUP_SQL: ${SETUP_SQL}` : ''})`;
}

export const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

/** One build's round: ceiling, ingest burst on `--role api`, then a `--role worker` drains. */
async function measureRun(
  options: BenchOptions,
  build: Build,
  databaseUrl: string,
  ceiling: Ceiling,
  postmasterPid: number,
): Promise<RunFigures> {
  const database = createDatabase(databaseUrl, { max: 2 });
  const db = database.db;
  try {
    const api = await serve(options, 'api', databaseUrl, { root: build.root });
    let ingest: Awaited<ReturnType<typeof burst>>;
    let apiCpuMs: number;
    let pgIngestMs: number;
    let pgIngestKinds: Record<string, number> = {};
    let ceilingRun: Awaited<ReturnType<typeof burst>>;
    let ceilingCpuMs: number;
    let commits = 0;
    try {
      await burst(api.url, signedDeliveries(BURST_BODIES_PER_SECOND * WARMUP_SECONDS), {
        connections: options.connections,
        duration: WARMUP_SECONDS,
      });
      const bodies = signedDeliveries(BURST_BODIES_PER_SECOND * options.seconds);
      const ceilingCpu = processCpuMs(ceiling.pid);
      ceilingRun = await ceiling.measure(options.connections, options.seconds);
      ceilingCpuMs = processCpuMs(ceiling.pid) - ceilingCpu;
      const apiCpu = processCpuMs(api.child.pid);
      const pgCpu = postgresCpuMs(postmasterPid);
      const pgKinds = postgresCpuByKind(postmasterPid);
      const jobs = await webhookJobs(db);
      ingest = await burst(api.url, bodies, { connections: options.connections, duration: options.seconds });
      apiCpuMs = processCpuMs(api.child.pid) - apiCpu;
      pgIngestMs = postgresCpuMs(postmasterPid) - pgCpu;
      pgIngestKinds = cpuByKindSince(pgKinds, postgresCpuByKind(postmasterPid));
      commits = (await webhookJobs(db)) - jobs;
    } finally {
      await api.stop();
    }
    const acknowledged = ingest.result['2xx'];

    // --ingest-only: the acknowledging figures alone, in half the time.
    const drainRun = options.ingestOnly ? undefined : await measureDrain(options, build, databaseUrl, db, postmasterPid);
    const drained = drainRun ? await inboxRows(db, true) : 0;
    const seconds = drainRun ? await drainSeconds(db) : 0;
    const inWindow = Math.max(drained, 1);
    const { workerCpuMs, pgDrainMs, pgDrainKindsMs, indexMs, workerRssMb } = drainRun ?? {
      workerCpuMs: 0,
      pgDrainMs: 0,
      pgDrainKindsMs: {},
      indexMs: 0,
      workerRssMb: 0,
    };
    const r = ingest.result;
    return {
      ceilingRps: Math.round(ceilingRun.result.requests.average),
      ceilingUsPerRequest: Math.round((ceilingCpuMs * 1000) / Math.max(ceilingRun.result['2xx'], 1)),
      ingestRps: Math.round(r.requests.average),
      ingestRatio: Number((r.requests.average / ceilingRun.result.requests.average).toFixed(3)),
      ingestP99Ms: r.latency.p99,
      acknowledged,
      non2xx: r.non2xx + r.errors + r.timeouts,
      generatorCpu: ingest.generatorCpu,
      drained,
      drainSeconds: Number(seconds.toFixed(2)),
      drainPerSec: seconds > 0 ? Math.round(drained / seconds) : 0,
      apiUsPerAck: Math.round((apiCpuMs * 1000) / Math.max(acknowledged, 1)),
      pgIngestUsPerAck: Math.round((pgIngestMs * 1000) / Math.max(acknowledged, 1)),
      pgIngestByKind: perDelivery(pgIngestKinds, Math.max(acknowledged, 1)),
      deliveriesPerCommit: Number((acknowledged / Math.max(commits, 1)).toFixed(1)),
      workerUsPerDelivery: Math.round((workerCpuMs * 1000) / inWindow),
      pgDrainUsPerDelivery: Math.round((pgDrainMs * 1000) / inWindow),
      pgDrainByKind: perDelivery(pgDrainKindsMs, inWindow),
      apiRssMb: Math.round(api.peakRssMb()),
      workerRssMb,
      indexUsPerDelivery: Math.round((indexMs * 1000) / inWindow),
    };
  } finally {
    await database.close();
  }
}

/** A `--role worker` drains what the burst stored: its CPU and PostgreSQL's over the drain. */
async function measureDrain(options: BenchOptions, build: Build, databaseUrl: string, db: Db, postmasterPid: number) {
  // The worker is timed from its spawn: on a backlog it processes before its start line
  // comes. What starting costs it and Postgres on an empty inbox (measured once per build) is
  // taken off, so the window holds the drain.
  const pgBefore = postgresCpuMs(postmasterPid);
  const pgDrainKinds = postgresCpuByKind(postmasterPid);
  const worker = await serve(options, 'worker', databaseUrl, { root: build.root, waitForStart: false });
  let workerCpuMs: number;
  let pgDrainMs: number;
  let pgDrainKindsMs: Record<string, number>;
  let indexMs = 0;
  try {
    await waitForDrain(worker, db);
    workerCpuMs = processCpuMs(worker.child.pid) - build.startCpu!.workerMs;
    pgDrainMs = postgresCpuMs(postmasterPid) - pgBefore - build.startCpu!.postgresMs;
    pgDrainKindsMs = cpuByKindSince(pgDrainKinds, postgresCpuByKind(postmasterPid));
    if (await anyMessageUnindexed(db)) {
      const [w, p] = [processCpuMs(worker.child.pid), postgresCpuMs(postmasterPid)];
      await waitFor('the search indexer to catch up', async () => !(await anyMessageUnindexed(db)), 300_000, 100);
      indexMs = processCpuMs(worker.child.pid) - w + postgresCpuMs(postmasterPid) - p;
    }
  } finally {
    await worker.stop();
  }
  return { workerCpuMs, pgDrainMs, pgDrainKindsMs, indexMs, workerRssMb: Math.round(worker.peakRssMb()) };
}

/** CPU ms by kind of process as µs per delivery, the kinds that used any. */
const perDelivery = (kinds: Record<string, number>, deliveries: number) =>
  Object.fromEntries(
    Object.entries(kinds)
      .filter(([, ms]) => ms > 0)
      .map(([k, ms]) => [k, Number(((ms * 1000) / deliveries).toFixed(1))]),
  );

/** A figure of the comparison: how it is read off one run, and which way is better. */
interface Figure<T = RunFigures> {
  name: string;
  of: (r: T) => number;
  better: 'higher' | 'lower';
  /** Read off the drain: left out with --ingest-only. */
  drain?: true;
}

export const FIGURES: Figure[] = [
  { name: 'ingest ÷ ceiling', of: (r) => r.ingestRatio, better: 'higher' },
  { name: '  ingest: ack p99 (ms)', of: (r) => r.ingestP99Ms, better: 'lower' },
  { name: 'drain, one worker (deliveries/s)', of: (r) => r.drainPerSec, better: 'higher', drain: true },
  { name: 'server CPU µs per delivery (api + worker)', of: (r) => r.apiUsPerAck + r.workerUsPerDelivery, better: 'lower', drain: true },
  {
    name: 'Postgres CPU µs per delivery (ingest + drain)',
    of: (r) => r.pgIngestUsPerAck + r.pgDrainUsPerDelivery,
    better: 'lower',
    drain: true,
  },
  {
    name: 'CPU per delivery ÷ the ceiling’s per request',
    of: (r) =>
      Number(((r.apiUsPerAck + r.workerUsPerDelivery + r.pgIngestUsPerAck + r.pgDrainUsPerDelivery) / r.ceilingUsPerRequest).toFixed(2)),
    better: 'lower',
    drain: true,
  },
  {
    name: 'CPU per ack ÷ the ceiling’s per request',
    of: (r) => Number(((r.apiUsPerAck + r.pgIngestUsPerAck) / r.ceilingUsPerRequest).toFixed(2)),
    better: 'lower',
  },
  { name: '  ingest: api CPU µs per ack', of: (r) => r.apiUsPerAck, better: 'lower' },
  { name: '  ingest: Postgres CPU µs per ack', of: (r) => r.pgIngestUsPerAck, better: 'lower' },
  { name: '  ingest: deliveries per group commit', of: (r) => r.deliveriesPerCommit, better: 'higher' },
  { name: '  drain: worker CPU µs per delivery', of: (r) => r.workerUsPerDelivery, better: 'lower', drain: true },
  { name: '  drain: Postgres CPU µs per delivery', of: (r) => r.pgDrainUsPerDelivery, better: 'lower', drain: true },
  { name: 'peak RSS, api (MB)', of: (r) => r.apiRssMb, better: 'lower' },
  { name: 'peak RSS, worker (MB)', of: (r) => r.workerRssMb, better: 'lower', drain: true },
];

/** What one build did in one round of `--compare --outbound-only` (outbound.ts's phase). */
export type OutboundFigures = Awaited<ReturnType<typeof measureOutbound>>['result'] & { rssMb: number };

export const OUTBOUND_FIGURES: Figure<OutboundFigures>[] = [
  { name: 'outbound, 1 endpoint (deliveries/s)', of: (r) => r.oneEndpoint.deliveriesPerSec, better: 'higher' },
  { name: '  service CPU µs per delivery', of: (r) => r.oneEndpoint.serviceUsPerDelivery, better: 'lower' },
  { name: '  Postgres CPU µs per delivery', of: (r) => r.oneEndpoint.postgresUsPerDelivery, better: 'lower' },
  { name: 'outbound, 4 endpoints (deliveries/s)', of: (r) => r.fourEndpoints.deliveriesPerSec, better: 'higher' },
  { name: '  service CPU µs per delivery', of: (r) => r.fourEndpoints.serviceUsPerDelivery, better: 'lower' },
  { name: '  Postgres CPU µs per delivery', of: (r) => r.fourEndpoints.postgresUsPerDelivery, better: 'lower' },
  { name: 'event → receiver at 200/s, p50 (ms)', of: (r) => r.latency.p50Ms, better: 'lower' },
  { name: 'event → receiver at 200/s, p99 (ms)', of: (r) => r.latency.p99Ms, better: 'lower' },
  { name: 'slow receiver, one event per commit (deliveries/s)', of: (r) => r.slowReceiver.deliveriesPerSec, better: 'higher' },
  { name: '  most in flight at once', of: (r) => r.slowReceiver.peakInFlight, better: 'higher' },
  { name: 'peak RSS (MB)', of: (r) => r.rssMb, better: 'lower' },
];

export interface CompareResult<T = RunFigures> {
  this: string;
  ref: string;
  rounds: { this: T; ref: T }[];
  figures: { name: string; label: string; better: 'higher' | 'lower'; this: number[]; ref: number[]; ratios: number[]; verdict: string }[];
}

/** Better, worse, or within the spread: whether every round's ratio falls on one side of 1. */
function verdict(ratios: number[], better: 'higher' | 'lower'): string {
  const lo = Math.min(...ratios);
  const hi = Math.max(...ratios);
  if (lo > 1) return better === 'higher' ? 'better' : 'worse';
  if (hi < 1) return better === 'higher' ? 'worse' : 'better';
  return 'within spread';
}

/** Each figure's values in every round, this ÷ ref per round, and the verdict. */
function summarise<T>(rounds: { this: T; ref: T }[], figures: Figure<T>[]): CompareResult['figures'] {
  return figures.map((fig) => {
    const ratios = rounds.map((r) => Number((fig.of(r.this) / fig.of(r.ref)).toFixed(3)));
    return {
      name: fig.name.trim(),
      label: fig.name,
      better: fig.better,
      this: rounds.map((r) => fig.of(r.this)),
      ref: rounds.map((r) => fig.of(r.ref)),
      ratios,
      verdict: verdict(ratios, fig.better),
    };
  });
}

/** One build's round of outbound webhooks: outbound.ts's phase on the build's own service. */
async function measureOutboundRun(
  options: BenchOptions,
  build: Build,
  databaseUrl: string,
  postmasterPid: number,
): Promise<OutboundFigures> {
  const database = createDatabase(databaseUrl, { max: 2 });
  try {
    const workspace = await database.db.selectFrom('workspaces').select('id').orderBy('id').executeTakeFirstOrThrow();
    const o = await measureOutbound(options, databaseUrl, database.db, workspace.id, { root: build.root, postmasterPid });
    return { ...o.result, rssMb: Math.round(o.rssMb) };
  } finally {
    await database.close();
  }
}

/**
 * `--compare <ref>`: the ingest burst and the drain, or with `--outbound-only` the outbound
 * webhook phase (the driver writes the events with this checkout's outbox; each build's own
 * service sends them).
 */
export async function measureCompare(
  options: BenchOptions & { compare: string },
): Promise<CompareResult<RunFigures> | CompareResult<OutboundFigures>> {
  const ref = await prepareRef(options.compare);
  const builds: Build[] = [{ key: 'this', label: thisLabel(), root: ROOT }, ref.build];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-compare-'));
  const postgres = await startEmbeddedPostgres(dir, { flags: POSTGRES_FLAGS }); // default durability: fsync and synchronous commit on
  const postmasterPid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const admin = new pg.Client({ connectionString: withDatabase(postgres.url, 'postgres') });
  await admin.connect();
  const ceiling = await startCeiling();
  try {
    // Each build migrates a template of its own with its own service and gets its tenant through
    // its own admin API; every round then starts from a copy of it.
    for (const build of builds) {
      say(`compare: a template database for ${build.label}`);
      await admin.query(`CREATE DATABASE template_${build.key}`);
      const api = await serve(options, 'api', withDatabase(postgres.url, `template_${build.key}`), { root: build.root });
      try {
        await provisionTenant(api.url, 'Bench');
      } finally {
        await api.stop();
      }
      if (build.key === 'this' && SETUP_SQL) {
        const template = new pg.Client({ connectionString: withDatabase(postgres.url, `template_${build.key}`) });
        await template.connect();
        await template.query(SETUP_SQL).finally(() => template.end());
      }
      await admin.query(`CREATE DATABASE start_${build.key} TEMPLATE template_${build.key}`);
      const pgBefore = postgresCpuMs(postmasterPid);
      const worker = await serve(options, 'worker', withDatabase(postgres.url, `start_${build.key}`), { root: build.root });
      build.startCpu = { workerMs: processCpuMs(worker.child.pid), postgresMs: postgresCpuMs(postmasterPid) - pgBefore };
      await worker.stop();
      await admin.query(`DROP DATABASE start_${build.key}`);
      say(`  a worker starts on ${build.startCpu.workerMs} ms of CPU, Postgres ${build.startCpu.postgresMs} ms`);
    }
    say(`compare: warming the ceiling up, ${WARMUP_SECONDS} s`);
    await ceiling.measure(options.connections, WARMUP_SECONDS);
    const rounds: CompareResult['rounds'] = [];
    const outboundRounds: CompareResult<OutboundFigures>['rounds'] = [];
    for (let round = 1; round <= options.rounds; round++) {
      // Which build goes first alternates, so neither always follows the other's drain.
      const order = round % 2 === 1 ? builds : [...builds].reverse();
      const figures: Partial<Record<Build['key'], RunFigures>> = {};
      const outbound: Partial<Record<Build['key'], OutboundFigures>> = {};
      for (const build of order) {
        const name = `round_${round}_${build.key}`;
        await admin.query(`CREATE DATABASE ${name} TEMPLATE template_${build.key}`);
        await admin.query('CHECKPOINT');
        if (options.outboundOnly) {
          say(`compare round ${round}/${options.rounds}, ${build.label}: outbound webhooks on one role-all process`);
          const o = await measureOutboundRun(options, build, withDatabase(postgres.url, name), postmasterPid);
          say(`  ${outboundLine(o)}`);
          outbound[build.key] = o;
          await admin.query(`DROP DATABASE ${name}`);
          continue;
        }
        say(
          `compare round ${round}/${options.rounds}, ${build.label}: ceiling, ingest on --role api (${options.connections} connections, ${options.seconds} s each), then --role worker drains`,
        );
        const f = await measureRun(options, build, withDatabase(postgres.url, name), ceiling, postmasterPid);
        say(
          `  ceiling ${f.ceilingRps} req/s, ingest ${f.ingestRps} req/s (${f.ingestRatio}; ${f.acknowledged} acknowledged, ${f.non2xx} not, generator ${Math.round(f.generatorCpu * 100)} % of a core), drain ${f.drainPerSec}/s (${f.drained} in ${f.drainSeconds} s); api ${f.apiUsPerAck} µs + Postgres ${f.pgIngestUsPerAck} µs per ack (${f.deliveriesPerCommit} per group commit), worker ${f.workerUsPerDelivery} µs + Postgres ${f.pgDrainUsPerDelivery} µs per delivery; ceiling ${f.ceilingUsPerRequest} µs per request; RSS api ${f.apiRssMb} MB, worker ${f.workerRssMb} MB; ingest Postgres by process ${JSON.stringify(f.pgIngestByKind)} µs per ack, drain ${JSON.stringify(f.pgDrainByKind)} µs per delivery; search indexing after the drain ${f.indexUsPerDelivery} µs per delivery`,
        );
        figures[build.key] = f;
        await admin.query(`DROP DATABASE ${name}`);
      }
      if (options.outboundOnly) outboundRounds.push({ this: outbound.this!, ref: outbound.ref! });
      else rounds.push({ this: figures.this!, ref: figures.ref! });
    }
    const labels = { this: builds[0]!.label, ref: builds[1]!.label };
    if (options.outboundOnly) return { ...labels, rounds: outboundRounds, figures: summarise(outboundRounds, OUTBOUND_FIGURES) };
    return {
      ...labels,
      rounds,
      figures: summarise(
        rounds,
        FIGURES.filter((fig) => !(options.ingestOnly && fig.drain)),
      ),
    };
  } finally {
    await ceiling.stop();
    await admin.end().catch(() => {});
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
    await ref.remove();
  }
}

/** The comparison as a table: each build's median [min–max], the median ratio this/ref [min–max of the rounds' ratios]. */
export function compareTable(c: CompareResult<unknown>): string[] {
  const span = (xs: number[]) => `${median(xs)} [${Math.min(...xs)}–${Math.max(...xs)}]`;
  const rows = [
    ['figure (median [min–max] of rounds)', 'this', 'ref', 'this/ref [spread]', 'better', 'verdict'],
    ...c.figures.map((f) => [f.label, span(f.this), span(f.ref), span(f.ratios), f.better, f.verdict]),
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return [
    `this: ${c.this}`,
    `ref:  ${c.ref}`,
    `${c.rounds.length} rounds, builds alternated; a ratio is this ÷ ref within one round`,
    '',
    ...rows.map((r) =>
      r
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join('  ')
        .trimEnd(),
    ),
  ];
}
