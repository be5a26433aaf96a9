import type { FastifyInstance } from 'fastify';
import { afterAll } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createStorage } from '../../src/attachments/storage-factory.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseOptions } from '../../src/db/database.js';
import { ReadReplica } from '../../src/db/replica.js';
import type { Deps } from '../../src/deps.js';
import { startBoss } from '../../src/jobs/boss.js';
import { startWorkers } from '../../src/jobs/registry.js';
import { visitorBus } from '../../src/livechat/visitor-events.js';
import { createLogger } from '../../src/logger.js';
import type { MailboxReaderOptions } from '../../src/mailboxes/mailbox-readers.js';
import { createMetrics } from '../../src/metrics.js';
import type { PresenceTimings } from '../../src/users/presence.js';
import { InboxWriter } from '../../src/webhooks-in/inbox-writer.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef-0123456789';
export const JWT_SECRET = 'test-jwt-secret-0123456789abcdefghijklmnopqrstuvwxyz';
/** INBOX_SECRET_KEY of every test context (64 hex characters: 32 bytes). */
export const SECRET_KEY_HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';

export interface TestContext {
  app: FastifyInstance;
  deps: Deps;
  /** The app's ingestion writer, which the context's workers (if started) let go first. */
  inboxWriter: InboxWriter;
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestContextOptions {
  /** Environment for loadConfig, on top of the test defaults. */
  env?: Record<string, string>;
  /** Start the queue workers too (default false: tests that need them say so). */
  workers?: boolean;
  /** A clock for deterministic schedules. */
  now?: () => Date;
  /** Share the database of another context (two app instances on one database). */
  database?: TestDatabase;
  /** Collects the service's log lines (parsed JSON) for tests that check what is logged. */
  logLines?: Record<string, unknown>[];
  /** How outbound webhooks resolve host names (DNS rebinding tests); the system resolver by default. */
  resolveHost?: Deps['resolveHost'];
  /** Pool options for the app's database (e.g. short timeouts for a stalled-database test). */
  databaseOptions?: DatabaseOptions;
  /** A shorter realtime heartbeat and delay before `offline` (availability tests). */
  presence?: Partial<PresenceTimings>;
  /** How the workers read `email.imap` mailboxes (default: they read none; tests start their own readers). */
  mailboxes?: MailboxReaderOptions;
  /** With DATABASE_REPLICA_URL in `env`: between the replica's probes (0: only when the test calls probe()). */
  replicaProbeIntervalMs?: number;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    INBOX_ADMIN_API_KEY: ADMIN_KEY,
    INBOX_JWT_SECRET: JWT_SECRET,
    INBOX_SECRET_KEY: SECRET_KEY_HEX,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...env,
  });
}

/**
 * A whole app on a database of its own: real Postgres, real pg-boss, the real Fastify app.
 * Closing it closes the pools before the database is dropped.
 */
export async function startTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const config = testConfig(options.env);
  const database = options.database ?? (await createTestDatabase());
  const log = options.logLines
    ? createLogger('info', { write: (line: string) => void options.logLines!.push(JSON.parse(line)) })
    : createLogger(config.logLevel);
  const { db, pool, close: closeDb } = createDatabase(database.url, { max: 5, ...options.databaseOptions });
  const boss = await startBoss(database.url, log, { max: 5, supervise: false });
  const metrics = createMetrics();
  const now = options.now ?? (() => new Date());
  const replica = config.databaseReplicaUrl
    ? new ReadReplica({
        url: config.databaseReplicaUrl,
        primary: pool,
        maxLagMs: config.replicaMaxLagMs,
        poolMax: 5,
        metrics,
        log,
        now,
        ...(options.replicaProbeIntervalMs === undefined ? {} : { probeIntervalMs: options.replicaProbeIntervalMs }),
      })
    : undefined;
  await replica?.start();
  const deps: Deps = {
    config,
    log,
    db,
    pool,
    ...(replica ? { replica } : {}),
    boss,
    metrics,
    jwtSecret: JWT_SECRET,
    secretKey: Buffer.from(SECRET_KEY_HEX, 'hex'),
    storage: await createStorage(config, db),
    visitors: visitorBus(db),
    now,
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
  };
  const inboxWriter = new InboxWriter(deps);
  const app = await buildApp(deps, { inboxWriter, ...(options.presence ? { presence: options.presence } : {}) });
  await app.ready();
  const workers = options.workers ? await startWorkers(deps, { ingest: inboxWriter, mailboxes: options.mailboxes ?? false }) : undefined;
  return {
    app,
    deps,
    inboxWriter,
    database,
    async close() {
      await app.close();
      await workers?.stop();
      await boss.stop({ graceful: false, close: true });
      await replica?.close();
      await closeDb();
      if (!options.database) await database.drop();
    },
  };
}

/** startTestContext for a whole file: started once, closed after the file's last test. */
export async function useTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const ctx = await startTestContext(options);
  afterAll(() => ctx.close());
  return ctx;
}

export function adminHeaders(): Record<string, string> {
  return { 'x-service-admin-api-key': ADMIN_KEY };
}
