import type pg from 'pg';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { createDatabase, type Db } from './database.js';

/** How often each process asks the primary and the replica how far they got. */
export const REPLICA_PROBE_MS = 500;
/** A probe's statement that gets no answer in this long counts the replica as down. */
const PROBE_TIMEOUT_MS = 2_000;
/** Unreplayed primary positions kept; beyond, the oldest but one go (lag then reads high, never low). */
const MAX_PENDING = 1_000;

export interface ReadReplicaOptions {
  /** DATABASE_REPLICA_URL. */
  url: string;
  /** The primary's pool: where the probe reads the primary's WAL position. */
  primary: pg.Pool;
  /** INBOX_REPLICA_MAX_LAG_MS. */
  maxLagMs: number;
  /** Connections of the replica's pool: the primary's query pool size (INBOX_DB_POOL_MAX). */
  poolMax: number;
  metrics: Metrics;
  log: Logger;
  /** Between probes; 0 probes only when asked (tests drive it). */
  probeIntervalMs?: number;
  /** The clock the lag is measured on. */
  now?: () => Date;
}

/** A WAL position (`16/B374D848`) as one number, so two can be compared. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

const WAL_PAGE = 8192n;

/**
 * The primary's insert position as the end of its last record. Right after a WAL page's header
 * (24 bytes, 40 on a segment's first page) the insert position counts the header the replica's
 * replay position does not: an idle primary would otherwise look forever ahead. Going back to
 * the page's start never calls a record replayed that is not: a record that ends just past a
 * header began before the page, where the replica's position then still is.
 */
export function insertEnd(position: bigint): bigint {
  const offset = position % WAL_PAGE;
  return offset === 24n || offset === 40n ? position - offset : position;
}

/**
 * A streaming replica of the primary, read while it keeps up. Lag is measured by WAL position,
 * not by the replica's last replayed commit time (which grows on an idle primary that has
 * nothing to send): each probe notes the primary's current position with the time, and the
 * replica shows the primary as of the latest noted time whose position it has replayed. That
 * bound is conservative by at most one probe interval, and keeps growing between probes, so a
 * replica that stops replaying is skipped once the bound passes the maximum even before the
 * next probe answers.
 */
export class ReadReplica {
  readonly db: Db;
  readonly pool: pg.Pool;
  private up = false;
  /** The time as of which everything the primary had is on the replica; undefined: not known yet. */
  private visibleAt: number | undefined;
  /** Primary positions, oldest first, that the replica had not replayed at the last probe. */
  private pending: { at: number; lsn: bigint }[] = [];
  private probing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private lagging = false;
  /** When each caller (a workspace, the platform's operator, a workspace's announced changes) last wrote. */
  private writes = new Map<string, number>();
  private readonly now: () => Date;

  constructor(private readonly options: ReadReplicaOptions) {
    const database = createDatabase(options.url, {
      max: options.poolMax,
      applicationName: 'inbox-replica',
      // A replica that does not answer soon is skipped by the next probe; reads waiting on it
      // should fail rather than queue behind it for the primary's full connection timeout.
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    });
    this.db = database.db;
    this.pool = database.pool;
    this.now = options.now ?? (() => new Date());
    options.metrics.watchPool('replica', () => this.pool);
    options.metrics.watchReplica(() => {
      const lag = this.lagMs();
      return { up: this.up, lagSeconds: lag === undefined ? undefined : lag / 1000 };
    });
  }

  /** Probes once (a replica down at start only logs: the primary serves meanwhile), then every interval. */
  async start(): Promise<void> {
    await this.probe();
    const every = this.options.probeIntervalMs ?? REPLICA_PROBE_MS;
    if (every > 0) {
      this.timer = setInterval(() => void this.probe(), every);
      this.timer.unref();
    }
  }

  /** One probe after any running one; never rejects. */
  probe(): Promise<void> {
    this.probing = this.probing.then(() => this.probeOnce());
    return this.probing;
  }

  /** How far behind the primary the replica may be now, in ms; undefined while down or not yet known. */
  lagMs(): number | undefined {
    if (!this.up || this.visibleAt === undefined) return undefined;
    return Math.max(0, this.now().getTime() - this.visibleAt);
  }

  /** A write that `caller`'s reads must see is committed now (a request's, or a change announced for a workspace). */
  noteWrite(caller: string): void {
    this.writes.set(caller, this.now().getTime());
  }

  /** When `caller` last wrote, while the replica may not show it yet. */
  lastWrite(caller: string): number | undefined {
    return this.writes.get(caller);
  }

  /**
   * True when a read may go to the replica now; otherwise counts why it goes to the primary.
   * With `after` (a time on this clock), the replica must also show the primary as of a time
   * after it: a caller that wrote then reads what it wrote.
   */
  usable(after?: number): boolean {
    if (!this.up) {
      this.options.metrics.replicaSkipped.inc({ reason: 'down' });
      return false;
    }
    const lag = this.lagMs();
    if (lag === undefined || lag > this.options.maxLagMs) {
      this.options.metrics.replicaSkipped.inc({ reason: 'lag' });
      return false;
    }
    // Strictly after: a probe that started in the same millisecond may have read the primary's
    // position before the write committed.
    if (after !== undefined && this.visibleAt! <= after) {
      this.options.metrics.replicaSkipped.inc({ reason: 'own_write' });
      return false;
    }
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.probing;
    await this.db.destroy();
  }

  private async probeOnce(): Promise<void> {
    const at = this.now().getTime();
    let primary: bigint;
    try {
      // The primary first: what the replica has replayed after this read is compared to it.
      // The insert position, not the write position: a commit made with synchronous_commit
      // off is visible on the primary before its WAL is written.
      const p = await this.options.primary.query<{ lsn: string }>({
        text: 'SELECT pg_current_wal_insert_lsn()::text AS lsn',
        query_timeout: PROBE_TIMEOUT_MS,
      } as pg.QueryConfig);
      primary = insertEnd(parseLsn(p.rows[0]!.lsn));
    } catch {
      // A busy or absent primary says nothing about the replica: this round is skipped, and
      // the lag keeps growing from the last round that measured it.
      return;
    }
    let replayed: bigint;
    try {
      const r = await this.pool.query<{ recovery: boolean; replayed: string | null }>({
        text: 'SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replayed',
        query_timeout: PROBE_TIMEOUT_MS,
      } as pg.QueryConfig);
      // A server out of recovery (promoted, or not a replica at all) no longer follows this
      // primary: what it shows may never catch up.
      if (!r.rows[0]?.recovery || !r.rows[0].replayed) throw new Error('the replica is not a standby in recovery');
      replayed = parseLsn(r.rows[0].replayed);
    } catch (err) {
      if (this.up) this.options.log.warn({ err: (err as Error).message }, 'the read replica is down: reads go to the primary');
      this.up = false;
      this.visibleAt = undefined;
      this.pending = [];
      return;
    }
    if (!this.up) this.options.log.info('the read replica answers: reads go to it while it keeps up');
    this.up = true;
    const last = this.pending.at(-1);
    if (last?.lsn === primary) last.at = at;
    else this.pending.push({ at, lsn: primary });
    if (this.pending.length > MAX_PENDING) this.pending.splice(1, 1);
    while (this.pending.length > 0 && this.pending[0]!.lsn <= replayed) this.visibleAt = this.pending.shift()!.at;
    // Writes the replica shows need no more remembering.
    for (const [caller, at] of this.writes) if (this.visibleAt !== undefined && at < this.visibleAt) this.writes.delete(caller);
    const lag = this.lagMs();
    const lagging = lag === undefined || lag > this.options.maxLagMs;
    if (lagging !== this.lagging) {
      if (lagging)
        this.options.log.warn({ lagMs: lag ?? null }, 'the read replica lags beyond INBOX_REPLICA_MAX_LAG_MS: reads go to the primary');
      else this.options.log.info({ lagMs: lag }, 'the read replica caught up');
      this.lagging = lagging;
    }
  }
}

/** A request as far as the choice of database needs it (a FastifyRequest is one). */
export interface ReadingRequest {
  method: string;
  auth?: { kind: string; workspaceId?: number } | null;
}

/** Whose writes a request's reads must see: its workspace's, or the operator's (the admin key). */
function callerOf(request: ReadingRequest): string | undefined {
  const auth = request.auth;
  if (!auth) return undefined;
  return auth.workspaceId === undefined ? 'platform' : `workspace:${auth.workspaceId}`;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The request may have written: its caller's next reads in this process go to the primary
 * until the replica has caught up with it. Called as the answer is sent, after any commit.
 */
export function noteRequestWrites(deps: { replica?: ReadReplica }, request: ReadingRequest): void {
  if (!deps.replica || READS.has(request.method)) return;
  const caller = callerOf(request);
  if (caller !== undefined) deps.replica.noteWrite(caller);
}

/**
 * A change of the workspace was announced (a realtime event, from any process): live lists
 * of it, which clients re-read on such an event, wait for the replica to show it.
 */
export function noteWorkspaceChange(deps: { replica?: ReadReplica }, workspaceId: number): void {
  deps.replica?.noteWrite(`changes:${workspaceId}`);
}

/**
 * The database a read may use: the replica when one is configured, answers, keeps up, and
 * already shows the caller's own last write; otherwise the primary. A request that is not a
 * GET (or HEAD) may have written, and reads what it wrote only on the primary: it never reads
 * the replica, whatever it reads after. Jobs pass no request. A `live` list (one a client
 * re-reads when a realtime event says it changed) also waits for the workspace's last
 * announced change, so the re-read is never older than the event that asked for it.
 */
export function readFrom(deps: { db: Db; replica?: ReadReplica }, request?: ReadingRequest, options: { live?: boolean } = {}): Db {
  if (!deps.replica) return deps.db;
  if (request && !READS.has(request.method)) return deps.db;
  const caller = request && callerOf(request);
  const wrote = caller === undefined ? undefined : deps.replica.lastWrite(caller);
  const workspaceId = request?.auth?.workspaceId;
  const changed = options.live && workspaceId !== undefined ? deps.replica.lastWrite(`changes:${workspaceId}`) : undefined;
  const after = wrote === undefined || changed === undefined ? (wrote ?? changed) : Math.max(wrote, changed);
  return deps.replica.usable(after) ? deps.replica.db : deps.db;
}

/** For jobs: the replica only if it shows what the primary held at `since` (the job's request), else the primary. */
export function readAsOf(deps: { db: Db; replica?: ReadReplica }, since: Date): Db {
  if (!deps.replica) return deps.db;
  return deps.replica.usable(since.getTime()) ? deps.replica.db : deps.db;
}
