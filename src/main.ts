import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { createStorage } from './attachments/storage-factory.js';
import { type Config, ConfigError, listenUrl, loadConfig, SECRET_KEY_FORMAT } from './config.js';
import { parseSecretKey, SECRET_KEY_BYTES } from './crypto/secret-box.js';
import { createDatabase, type Database } from './db/database.js';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from './db/embedded.js';
import { migrateToLatest, pendingMigrations, unknownMigrations } from './db/migrate.js';
import { ReadReplica } from './db/replica.js';
import type { Deps } from './deps.js';
import { buildOpsApp } from './http/server.js';
import { startBoss } from './jobs/boss.js';
import { createQueues, type RunningWorkers, startWorkers } from './jobs/registry.js';
import { visitorBus } from './livechat/visitor-events.js';
import { createLogger, type Logger } from './logger.js';
import { systemMailer } from './mail/system-mailer.js';
import { createMetrics, metricsForParent } from './metrics.js';
import { startTracing, stopTracing } from './tracing/tracing.js';
import { packageVersion } from './version.js';
import { InboxWriter } from './webhooks-in/inbox-writer.js';
import { isSupervisedWorker, serveParent, WorkerProcess } from './worker-process.js';
import { announceSetupLink } from './workspaces/first-run.js';

export type Role = 'all' | 'api' | 'worker';
export const ROLES: Role[] = ['all', 'api', 'worker'];

/**
 * Shows a database URL without its password, whether it sits in the user part or in the query
 * (node-postgres reads `?password=` and `?sslpassword=` too).
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of ['password', 'sslpassword']) if (u.searchParams.has(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** A generated secret file must hold at least this many characters, like INBOX_JWT_SECRET. */
export const SECRET_FILE_MIN = 32;

/** A secret the service generates into the data dir when its variable is unset. */
export interface SecretFile<T> {
  /** The file's name inside the data dir. */
  name: string;
  /** The variable that, when set, replaces the file (named in the error). */
  variable: string;
  /** A fresh secret as the file holds it. */
  generate(): string;
  /** The secret from the file's trimmed text, or why that text is not one. */
  parse(text: string): { ok: true; value: T } | { ok: false; problem: string };
}

export const JWT_SECRET_FILE: SecretFile<string> = {
  name: 'jwt-secret',
  variable: 'INBOX_JWT_SECRET',
  generate: () => randomBytes(48).toString('base64url'),
  parse: (text) =>
    text.length >= SECRET_FILE_MIN
      ? { ok: true, value: text }
      : { ok: false, problem: `holds ${text.length} characters, a secret needs at least ${SECRET_FILE_MIN}` },
};

export const SECRET_KEY_FILE: SecretFile<Buffer> = {
  name: 'secret-key',
  variable: 'INBOX_SECRET_KEY',
  generate: () => randomBytes(SECRET_KEY_BYTES).toString('hex'),
  parse: (text) => {
    const key = parseSecretKey(text);
    return key ? { ok: true, value: key } : { ok: false, problem: `holds ${text.length} characters, expected ${SECRET_KEY_FORMAT}` };
  },
};

/** INBOX_JWT_SECRET, or one generated on first start and kept in the data dir. */
export async function resolveJwtSecret(config: Config): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  return readOrCreateSecretFile(path.join(config.dataDir, JWT_SECRET_FILE.name), JWT_SECRET_FILE);
}

/**
 * INBOX_SECRET_KEY, or one generated on first start and kept in the data dir. Losing that file
 * loses every connection's credentials (they are sealed under it): back it up with the data.
 */
export async function resolveSecretKey(config: Config): Promise<Buffer> {
  if (config.secretKey) return config.secretKey;
  return readOrCreateSecretFile(path.join(config.dataDir, SECRET_KEY_FILE.name), SECRET_KEY_FILE);
}

/**
 * The secret kept in `file`, generated into it if the file does not exist yet. Several
 * processes may start at once on one data dir (api and worker roles): the file is published
 * only complete and only if absent — written exclusively (`wx`) under a private name, then
 * hard-linked to `file`, which fails if another process got there first — so every process
 * ends up with the one secret that won, never half a file. A file that does not hold a valid
 * secret (truncated, hand-edited) stops the start: tokens signed with a short secret could be
 * forged, and a wrong key would only fail later, on the first credential it cannot open.
 */
export async function readOrCreateSecretFile<T>(file: string, kind: SecretFile<T>): Promise<T> {
  await mkdir(path.dirname(file), { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(draft, kind.generate(), { mode: 0o600, flag: 'wx' });
    await link(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(draft).catch(() => {});
  }
  const parsed = kind.parse((await readFile(file, 'utf8')).trim());
  if (!parsed.ok) {
    throw new ConfigError([`${file}: ${parsed.problem} (remove the file to have a new one generated, or set ${kind.variable})`]);
  }
  return parsed.value;
}

export interface OpenDatabase {
  url: string;
  database: Database;
  close(): Promise<void>;
}

/**
 * The database (embedded when DATABASE_URL is absent), migrated to the latest schema. With
 * `migrate: false` (INBOX_MIGRATE_ON_START=false) it is only checked: a schema behind this
 * version stops the start, naming the command that brings it up to date.
 */
export async function openDatabase(config: Config, log: Logger, options: { migrate?: boolean } = {}): Promise<OpenDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    log.info({ dataDir: config.dataDir }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.dataDir, {
      onLog: (line) => log.debug({ postgres: line.trim() }, 'postgres'),
    });
    if (embedded.attached) log.info('embedded PostgreSQL is already running for this data dir; using it');
    if (embedded.adopted)
      log.info(
        'embedded PostgreSQL was left running by a process that stopped without stopping it; using it, and stopping it with this one',
      );
    url = embedded.url;
  }
  const database = createDatabase(url, { max: config.dbPoolMax });
  const close = async () => {
    await database.close().catch(() => {});
    await embedded?.stop();
  };
  // Migrations may rewrite large tables: they run on a connection of their own without the
  // statement and query timeouts that bound requests.
  const migrator = createDatabase(url, { max: 1, statementTimeoutMillis: 0, queryTimeoutMillis: 0, applicationName: 'inbox-migrate' });
  try {
    const newer = await unknownMigrations(migrator.db);
    if (newer.length > 0) {
      // A newer version migrated this database: this one may serve it (docs/operations.md,
      // "Upgrades and migrations") but cannot migrate it, nor serve it if it lacks its own.
      const pending = await pendingMigrations(migrator.db);
      if (pending.length > 0) {
        throw new ConfigError([
          `DATABASE_URL: the database has migrations this version does not know (${newer[0]}…) and lacks ${pending.length} of its own (${pending[0]}…): run the version that migrated it`,
        ]);
      }
      log.warn({ migrations: newer }, 'the database was migrated by a newer version of inbox: nothing to migrate, serving it as it is');
    } else if (options.migrate ?? config.migrateOnStart) {
      const applied = await migrateToLatest(migrator.db);
      if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
    } else {
      const pending = await pendingMigrations(migrator.db);
      if (pending.length > 0) {
        throw new ConfigError([
          `INBOX_MIGRATE_ON_START: false, and the database lacks ${pending.length} migration(s) of this version (${pending[0]}…): run \`inbox migrate\` first`,
        ]);
      }
    }
  } catch (err) {
    await migrator.close().catch(() => {});
    await close().catch(() => {});
    throw err;
  }
  await migrator.close();
  return { url, database, close };
}

/**
 * `inbox migrate`: the service's schema and the queue's (pg-boss installs or upgrades its own
 * tables when it starts with `migrate`), so processes started with INBOX_MIGRATE_ON_START=false
 * find both ready.
 */
export async function migrateAll(config: Config, log: Logger): Promise<void> {
  const opened = await openDatabase(config, log, { migrate: true });
  try {
    const boss = await startBoss(opened.url, log, { max: 1, supervise: false, schedule: false, migrate: true });
    await createQueues(boss);
    await boss.stop({ graceful: false, close: true });
  } finally {
    await opened.close();
  }
}

export interface Infrastructure {
  deps: Deps;
  databaseUrl: string;
  close(): Promise<void>;
}

/** What `serve` needs: the migrated database, a started pg-boss with every queue, the deps. */
export async function openInfrastructure(config: Config, log: Logger, options: { schedule?: boolean } = {}): Promise<Infrastructure> {
  // First, so a bad secret file stops the start before a database is started for nothing.
  const jwtSecret = await resolveJwtSecret(config);
  const secretKey = await resolveSecretKey(config);
  const opened = await openDatabase(config, log);
  let replica: ReadReplica | undefined;
  try {
    const boss = await startBoss(opened.url, log, {
      schedule: options.schedule,
      max: config.queuePoolMax,
      migrate: config.migrateOnStart,
    });
    await createQueues(boss);
    const metrics = createMetrics();
    metrics.watchPool('db', () => opened.database.pool);
    metrics.watchPool('queue', () => queuePool(boss));
    if (config.databaseReplicaUrl) {
      replica = new ReadReplica({
        url: config.databaseReplicaUrl,
        primary: opened.database.pool,
        maxLagMs: config.replicaMaxLagMs,
        poolMax: config.dbPoolMax,
        metrics,
        log,
      });
      await replica.start();
      log.info({ replica: redactUrl(config.databaseReplicaUrl), lagMs: replica.lagMs() ?? null }, 'read replica configured');
    }
    const deps: Deps = {
      config,
      log,
      db: opened.database.db,
      pool: opened.database.pool,
      ...(replica ? { replica } : {}),
      boss,
      metrics,
      jwtSecret,
      secretKey,
      storage: await createStorage(config, opened.database.db),
      visitors: visitorBus(opened.database.db),
      now: () => new Date(),
    };
    return {
      deps,
      databaseUrl: opened.url,
      async close() {
        await boss.stop({ graceful: true, close: true, timeout: 10_000 });
        await replica?.close();
        await opened.close();
      },
    };
  } catch (err) {
    await replica?.close().catch(() => {});
    await opened.close().catch(() => {});
    throw err;
  }
}

/** pg-boss's own pool, for the pool gauges (undefined while it is closed). */
function queuePool(boss: PgBoss): pg.Pool | undefined {
  const db = boss.getDb() as { pool?: pg.Pool; opened?: boolean };
  return db.opened ? db.pool : undefined;
}

export interface RunningService {
  /** Where the api listens (role all or api), or a worker's /healthz, /readyz and /metrics (none in role all's worker process). */
  url: string | undefined;
  deps: Deps;
  app: FastifyInstance | undefined;
  /** Role `all`: the process that works the queues. */
  worker: WorkerProcess | undefined;
  stop(): Promise<void>;
}

/**
 * The environment of role `all`'s worker process: the parent's, with the database the parent
 * resolved (the embedded one it started, or DATABASE_URL however it was given) and migrated.
 */
function workerEnv(env: NodeJS.ProcessEnv, databaseUrl: string): NodeJS.ProcessEnv {
  const { DATABASE_URL_FILE: _file, ...rest } = env;
  return { ...rest, DATABASE_URL: databaseUrl, INBOX_MIGRATE_ON_START: 'false' };
}

/**
 * `inbox serve`: the api (HTTP) and/or the worker (queue consumers), per `role`. Role `all` is
 * the api in this process and the worker in a child process (WorkerProcess), so that
 * processing never delays an acknowledgement on this event loop.
 */
export async function startService(options: { role?: Role; env?: NodeJS.ProcessEnv } = {}): Promise<RunningService> {
  const role = options.role ?? 'all';
  const env = options.env ?? process.env;
  let config = loadConfig(env);
  if (role !== 'worker' && config.port === 0 && config.publicUrl === listenUrl(config.host, 0)) {
    // PORT=0 (any free port) and no INBOX_PUBLIC_URL: the links the service hands out (the
    // setup link, signed file links, surveys), here and in role all's worker process, name the
    // port it will listen on, chosen now, not port 0.
    const port = await freePort(config.host).catch(() => 0);
    config = { ...config, port, publicUrl: listenUrl(config.host, port) };
  }
  const supervised = role === 'worker' && isSupervisedWorker(env);
  // Every line names its role: role `all` and its worker process write to one stdout.
  const log = createLogger(config.logLevel).child({ role });
  // Before the pools and the app exist, so their first statement and request are traced.
  if (config.otelEndpoint) await startTracing({ endpoint: config.otelEndpoint, role, version: packageVersion() });
  // Cron schedules fire where the queues are worked: exactly one process of `npm start`.
  const infra = await openInfrastructure(config, log, { schedule: role === 'worker' }).catch(async (err: unknown) => {
    await stopTracing();
    throw err;
  });
  const { deps } = infra;
  let app: FastifyInstance | undefined;
  let url: string | undefined;
  let workers: RunningWorkers | undefined;
  let worker: WorkerProcess | undefined;
  let running = false;
  try {
    let workerStarted: Promise<void> | undefined;
    const inboxWriter = role === 'all' ? new InboxWriter(deps) : undefined;
    if (role === 'all') {
      // Started first, so it boots while the api does.
      const child = new WorkerProcess({
        entry: process.argv[1]!,
        env: { ...workerEnv(env, infra.databaseUrl), PORT: String(config.port) },
        log,
        ingest: inboxWriter,
      });
      worker = child;
      workerStarted = child.start();
      workerStarted.catch(() => {}); // awaited below; this keeps a failure meanwhile from going unhandled
      deps.metrics.include(() => child.metrics());
    }
    const child = worker;
    // Ready once it has said it runs (below): a probe that sees 200 finds the start logged, and
    // a worker's finds its queues worked.
    const notReady = () =>
      !running ? 'the service is still starting' : child && !child.up ? 'the worker process is not running' : undefined;
    if (role !== 'worker') {
      // Imported here: a worker process never loads the api's routes (about 18 MB of its RSS).
      const { buildApp } = await import('./app.js');
      app = await buildApp(deps, { ...(inboxWriter ? { inboxWriter } : {}), notReady });
      url = await listen(app, config.port, config.host, 'PORT');
    } else if (!supervised) {
      // A worker serves no API, but is probed and scraped like any process; a port already
      // taken stops the start before it takes any job. Role all's worker process is probed
      // and scraped through its parent instead.
      app = await buildOpsApp(deps, { notReady });
      url = await listen(app, config.metricsPort, config.host, 'INBOX_METRICS_PORT');
    }
    const parent = supervised ? serveParent(() => metricsForParent(deps.metrics.registry, role)) : undefined;
    if (role === 'worker') workers = await startWorkers(deps, parent ? { ingest: parent.ingest } : {});
    parent?.ready();
    await workerStarted;
    // The process that serves the console says how to reach its setup screen, before it says it runs.
    if (role !== 'worker') await announceSetupLink(deps);
    log.info(
      { url, database: redactUrl(infra.databaseUrl), workers: workers?.queues ?? [], ...(worker ? { workerPid: worker.pid } : {}) },
      'inbox is running',
    );
    running = true;
  } catch (err) {
    await app?.close().catch(() => {});
    await worker?.stop().catch(() => {});
    await infra.close().catch(() => {});
    await stopTracing();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    deps,
    app,
    worker,
    stop() {
      // Order matters: stop taking requests and let in-flight ones finish, then let workers
      // (this process's, or role all's worker process) finish their jobs, then close the pools
      // and the embedded database.
      stopping ??= (async () => {
        await app?.close();
        await systemMailer(deps)?.settled();
        await worker?.stop();
        await workers?.stop();
        await infra.close();
        // Last: the spans of the shutdown's own work are sent too.
        await stopTracing();
        log.info('inbox stopped');
      })();
      return stopping;
    },
  };
}

/**
 * Listens on `host:port`; an address that cannot be taken (in use, not this machine's, a HOST
 * that does not resolve, a port below 1024 without the right) stops the start as a
 * configuration error naming the variables, not a stack.
 */
async function listen(app: FastifyInstance, port: number, host: string, portVariable: string): Promise<string> {
  try {
    return await app.listen({ port, host });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === undefined || !LISTEN_CODES.has(code)) throw err;
    throw new ConfigError([`${portVariable}, HOST: cannot listen on ${host}:${port} (${(err as Error).message})`]);
  }
}

const LISTEN_CODES = new Set(['EADDRINUSE', 'EADDRNOTAVAIL', 'EACCES', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME']);
