import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { AttachmentStorage } from './attachments/storage.js';
import type { VisitorBus } from './channels/livechat.js';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { ReadReplica } from './db/replica.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import type { ResolveHost } from './net/address-guard.js';

/**
 * What the process entry builds once and hands to the app, the workers and the CLI.
 * Route plugins get it in their options; job handlers and services take it as an argument.
 */
export interface Deps {
  config: Config;
  log: Logger;
  db: Db;
  pool: pg.Pool;
  /**
   * DATABASE_REPLICA_URL's streaming replica; lists, search, reports and exports pick it or the
   * primary per read with `readFrom()` (src/db/replica.ts). Absent: everything reads `db`.
   */
  replica?: ReadReplica;
  boss: PgBoss;
  metrics: Metrics;
  /** Secret for signing JWTs: INBOX_JWT_SECRET, or the one generated into the data dir. */
  jwtSecret: string;
  /** Seals connection credentials at rest: INBOX_SECRET_KEY, or the one generated into the data dir. */
  secretKey: Buffer;
  /** Where attachments' bytes live (INBOX_STORAGE). */
  storage: AttachmentStorage;
  /** Live chat's bus to the api process holding a visitor's socket, for senders of replies. */
  visitors: VisitorBus;
  /** The clock; tests inject a fixed one to check schedules without waiting. */
  now: () => Date;
  /** How outbound webhooks resolve host names; the system resolver when absent (tests name their own). */
  resolveHost?: ResolveHost;
}
