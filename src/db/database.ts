import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { sha256Hex } from '../crypto/hmac.js';
import { parseTimestamptz } from './timestamptz.js';
import type { DB } from './types.js';

// int8 (bigint ids, counts) as numbers: ids stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
// timestamptz into the very Date pg makes, without its regular expressions (see parseTimestamptz).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

export type Db = Kysely<DB>;
/** What every query function takes: the database or a transaction on it. */
export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * Runs `fn` in a transaction on one raw pool client. For the few hot paths where Kysely's
 * per-call query building is measurable (ingestion); everything else uses `db.transaction()`.
 */
export async function withClientTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    // After a client-side query timeout the server may still be running the statement on
    // this connection: a ROLLBACK would only queue behind it. Dropping the connection ends
    // the transaction instead, and keeps a busy client out of the pool.
    if (isQueryReadTimeout(err)) broken = err as Error;
    else await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release(broken);
  }
}

/** How long the pool may wait for a connection, and how long one statement may run. */
export interface DatabaseOptions {
  max?: number;
  applicationName?: string;
  /** Waiting for a pool connection (or a new one to open). Default 5 s. */
  connectionTimeoutMillis?: number;
  /** Postgres `statement_timeout` for every statement of the pool; 0 = none. Default 15 s. */
  statementTimeoutMillis?: number;
  /**
   * Client-side limit on waiting for a query's answer (a server or network that went silent,
   * which statement_timeout cannot catch); 0 = none. Default: the statement timeout + 5 s.
   */
  queryTimeoutMillis?: number;
}

export const DATABASE_DEFAULTS = { connectionTimeoutMillis: 5_000, statementTimeoutMillis: 15_000 } as const;

/**
 * Errors that mean "the database did not answer in time or cannot take work now", not "this
 * request is wrong": a pool that gave no connection in time, a statement cancelled by
 * statement_timeout or a lock timeout, a silent server, a database that refuses or shuts
 * down connections. Callers answer them 503 so a client (a provider) retries.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return isQueryReadTimeout(err) || CONNECTION_LOST.has(err.message);
}

/**
 * Errors that mean "PostgreSQL refused a value of this write", whatever the moment: a data
 * exception (SQLSTATE class 22: a NUL, a date or number out of range, a too long value), an
 * integrity constraint (23: a unique key already taken) or a program limit (54: an index entry
 * too large). Writing the same row again fails the same way; a batch that holds it records its
 * rows one by one so the refusal stays that row's own.
 */
export function isValueRefused(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^(22|23|54)/.test(code);
}

/**
 * node-postgres's own errors (no code) for a connection that could not be made in time or was
 * cut: a server shutting down closes sockets mid-handshake ("terminated unexpectedly"), and a
 * client whose connection died refuses the next statement. Seen as 500s while PostgreSQL
 * stopped under load (npm run faults, part 2) until they were listed here.
 */
const CONNECTION_LOST = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]);

const UNAVAILABLE_CODES = new Set([
  '40001', // serialization_failure: also a read replica's statement cancelled by a conflict with recovery
  '57014', // query_canceled (statement_timeout)
  '55P03', // lock_not_available (lock_timeout)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
]);

function isQueryReadTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Query read timeout';
}

/**
 * The start (or the end) of a statement's text that has it prepared on each connection the
 * first time the connection runs it (named after a hash of the text), then only bound and
 * executed: for hot statements whose planning is a large share of their cost (routing's pool
 * and assignment plan for as long as they run). PostgreSQL keeps custom plans for the first
 * five runs and then a generic one when its estimate is no worse. Write it first in the `sql`
 * text, sql`${PREPARED} SELECT …`, or last on a query builder, `.modifyEnd(PREPARED)`. Only for
 * a statement whose text is one of a few (no list of values spelled out) and that names the
 * columns it returns (never `*`: see ./thread-columns.ts).
 */
export const PREPARED_MARK = '/* prepared */';
export const PREPARED = sql.raw(PREPARED_MARK);

const preparedNames = new Map<string, string>();

/** The name a statement's text is prepared under on every connection: the same text, the same name. */
export function preparedName(text: string): string {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `prepared_${sha256Hex(text).slice(0, 16)}`;
    preparedNames.set(text, name);
  }
  return name;
}

type AnyQuery = (this: pg.Client, ...args: unknown[]) => unknown;
/**
 * pg.Client's query as it is when called, not when this module loaded: tracing
 * (src/tracing/tracing.ts) wraps it after the modules load, and every statement must go
 * through the wrapper to be traced.
 */
const clientQuery = () => pg.Client.prototype.query as unknown as AnyQuery;

/** node-postgres's client, naming the statements marked PREPARED (Kysely passes text and values). */
class PreparingClient extends pg.Client {}
(PreparingClient.prototype as unknown as { query: AnyQuery }).query = function (this: pg.Client, ...args: unknown[]) {
  const [text, values] = args;
  if (
    typeof text === 'string' &&
    (text.startsWith(PREPARED_MARK) || text.endsWith(PREPARED_MARK)) &&
    Array.isArray(values) &&
    args.length === 2
  ) {
    return clientQuery().call(this, { name: preparedName(text), text, values });
  }
  return clientQuery().apply(this, args);
};

export interface Database {
  pool: pg.Pool;
  db: Db;
  close(): Promise<void>;
}

/**
 * The pool and Kysely on it. Every request is bounded: a connection is waited for at most
 * `connectionTimeoutMillis`, a statement runs at most `statementTimeoutMillis`, and an answer
 * that never comes is given up after `queryTimeoutMillis`.
 */
export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const statementTimeout = options.statementTimeoutMillis ?? DATABASE_DEFAULTS.statementTimeoutMillis;
  const queryTimeout = options.queryTimeoutMillis ?? (statementTimeout > 0 ? statementTimeout + 5_000 : 0);
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'inbox',
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? DATABASE_DEFAULTS.connectionTimeoutMillis,
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
    ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
  });
  // An idle client that loses its server (restart, failover) must not crash the process, and
  // neither may one that is checked out: pg-pool listens for errors only on idle clients, so
  // the server's FATAL on shutdown, arriving between two statements of a transaction (a worker
  // between its reads and writes), was an unhandled 'error' event that killed the process. The
  // next statement on that client fails with the connection's error instead, and the pool
  // drops the client when it is released.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    pool,
    db,
    async close() {
      await db.destroy();
    },
  };
}
