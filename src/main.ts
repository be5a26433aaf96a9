import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { loadConfig, type Config } from './config.js';
import { createDatabase, type Database } from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrateToLatest } from './db/migrate.js';
import type { Deps } from './deps.js';
import { startBoss } from './jobs/boss.js';
import { createQueues, startWorkers, stopWorkers } from './jobs/registry.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';

export type Role = 'all' | 'api' | 'worker';
export const ROLES: Role[] = ['all', 'api', 'worker'];

/** Shows a database URL without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** INBOX_JWT_SECRET, or one generated on first start and kept in the data dir. */
async function resolveJwtSecret(config: Config): Promise<string> {
  if (config.jwtSecret) return config.jwtSecret;
  const file = path.join(config.dataDir, 'jwt-secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(config.dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  await writeFile(file, secret, { mode: 0o600 });
  return secret;
}

export interface OpenDatabase {
  url: string;
  database: Database;
  close(): Promise<void>;
}

/** The database (embedded when DATABASE_URL is absent), migrated to the latest schema. */
export async function openDatabase(config: Config, log: Logger): Promise<OpenDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (url === undefined) {
    log.info({ dataDir: config.dataDir }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.dataDir, {
      onLog: (line) => log.debug({ postgres: line.trim() }, 'postgres'),
    });
    if (embedded.attached) log.info('embedded PostgreSQL is already running for this data dir; using it');
    url = embedded.url;
  }
  const database = createDatabase(url);
  const close = async () => {
    await database.close().catch(() => {});
    await embedded?.stop();
  };
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return { url, database, close };
}

export interface Infrastructure {
  deps: Deps;
  databaseUrl: string;
  close(): Promise<void>;
}

/** What `serve` needs: the migrated database, a started pg-boss with every queue, the deps. */
export async function openInfrastructure(config: Config, log: Logger, options: { schedule?: boolean } = {}): Promise<Infrastructure> {
  const opened = await openDatabase(config, log);
  try {
    const boss = await startBoss(opened.url, log, { schedule: options.schedule });
    await createQueues(boss);
    const deps: Deps = {
      config,
      log,
      db: opened.database.db,
      pool: opened.database.pool,
      boss,
      metrics: createMetrics(),
      jwtSecret: await resolveJwtSecret(config),
      now: () => new Date(),
    };
    return {
      deps,
      databaseUrl: opened.url,
      async close() {
        await boss.stop({ graceful: true, close: true, timeout: 10_000 });
        await opened.close();
      },
    };
  } catch (err) {
    await opened.close().catch(() => {});
    throw err;
  }
}

export interface RunningService {
  url: string | undefined;
  deps: Deps;
  app: FastifyInstance | undefined;
  stop(): Promise<void>;
}

/** `inbox serve`: the api (HTTP) and/or the worker (queue consumers), per `role`. */
export async function startService(options: { role?: Role; env?: NodeJS.ProcessEnv } = {}): Promise<RunningService> {
  const role = options.role ?? 'all';
  const config = loadConfig(options.env);
  const log = createLogger(config.logLevel);
  const infra = await openInfrastructure(config, log, { schedule: role !== 'api' });
  const { deps } = infra;
  let app: FastifyInstance | undefined;
  let url: string | undefined;
  try {
    if (role !== 'worker') {
      app = await buildApp(deps);
      url = await app.listen({ port: config.port, host: config.host });
    }
    const workers = role !== 'api' ? await startWorkers(deps) : [];
    log.info({ role, url, database: redactUrl(infra.databaseUrl), workers }, 'inbox is running');
  } catch (err) {
    await app?.close().catch(() => {});
    await infra.close().catch(() => {});
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    deps,
    app,
    stop() {
      // Order matters: stop taking requests and let in-flight ones finish, then let workers
      // finish their jobs, then close the pools and the embedded database.
      stopping ??= (async () => {
        await app?.close();
        if (role !== 'api') await stopWorkers(deps);
        await infra.close();
        log.info('inbox stopped');
      })();
      return stopping;
    },
  };
}
