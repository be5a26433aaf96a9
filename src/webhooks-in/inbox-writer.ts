import { isDatabaseUnavailable } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import type { IngestLoad } from '../jobs/queue.js';
import { deliveriesJobStatement, JOB_DELIVERIES } from './inbox.enqueue.js';
import { type NewInboxRow, storeDeliveries } from './inbox.queries.js';

interface Pending {
  row: NewInboxRow;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Persists accepted deliveries and enqueues their ids, row and job in one statement, so an
 * acknowledged delivery is always both stored and queued and a failed enqueue leaves no row.
 *
 * Group commit: while a transaction is in flight, deliveries that arrive meanwhile wait and
 * go together in the next one (one multi-row INSERT, one batched job insert). Under no load
 * each delivery commits alone at once; under load the cost of a commit is shared, which is
 * what lets ingestion keep up with many concurrent provider connections. Every caller still
 * gets its answer only after its own row and job are committed.
 *
 * Overload: the writer holds at most `config.ingestMaxPending` deliveries (waiting or being
 * committed). When the database is slower than the arrivals, that many requests wait and
 * the next ones are refused at once with 503 and `retry-after: 1` (every provider retries)
 * instead of piling up in memory without bound. Nothing is ever answered 200 uncommitted.
 */
export class InboxWriter implements IngestLoad {
  private pending: Pending[] = [];
  private inFlight = 0;
  private holding = 0;
  private peakHolding = 0;
  /** Deliveries refused since the writer last filled up; undefined while it is not refusing. */
  private refusedSinceFull: number | undefined;

  constructor(
    private readonly deps: Deps,
    // A commit's deliveries fit one job (enqueueDeliveries), so a group commit queues one job.
    // One commit at a time: what arrives meanwhile waits for the next, so a commit's fixed
    // cost (its job row and its 17 index entries, the WAL flush, the round trip) is shared by
    // twice as many deliveries as with two in flight, for the same throughput and ack p99
    // (docs/performance.md, "One statement per group commit").
    private readonly options = { maxBatch: JOB_DELIVERIES, maxConcurrent: 1 },
  ) {}

  /** Deliveries accepted and not yet answered (waiting or in a commit). */
  get held(): number {
    return this.holding;
  }

  /** The most deliveries ever held at once; never above `config.ingestMaxPending`. */
  get peakHeld(): number {
    return this.peakHolding;
  }

  write(row: NewInboxRow): Promise<void> {
    if (this.holding >= this.deps.config.ingestMaxPending) return Promise.reject(this.full());
    this.holding++;
    if (this.holding > this.peakHolding) this.peakHolding = this.holding;
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ row, resolve, reject });
      this.pump();
    });
  }

  /**
   * A delivery refused because the writer is full. Under an overload that is thousands a
   * second, each an expected answer the provider retries: one line says the refusing began,
   * one that it ended and how many were refused (once half the room is free again, so a
   * writer hovering at the cap does not log every commit).
   */
  private full(): Error {
    if (this.refusedSinceFull === undefined) {
      this.refusedSinceFull = 0;
      this.deps.log.warn(
        { held: this.holding, max: this.deps.config.ingestMaxPending },
        'ingestion is full (INBOX_INGEST_MAX_PENDING): refusing new deliveries with 503 until it drains',
      );
    }
    this.refusedSinceFull++;
    return errors.ingestFull();
  }

  /** A delivery is no longer held (stored or refused); the writer may have room again. */
  private released(): void {
    this.holding--;
    if (this.refusedSinceFull !== undefined && this.holding <= this.deps.config.ingestMaxPending / 2) {
      this.deps.log.warn({ refused: this.refusedSinceFull, held: this.holding }, 'ingestion accepts deliveries again');
      this.refusedSinceFull = undefined;
    }
  }

  /** A delivery's caller hears it is stored; it is no longer held. */
  private stored(p: Pending): void {
    this.released();
    p.resolve();
  }

  /** A delivery's caller hears why it is not stored; it is no longer held. */
  private refused(p: Pending, err: unknown): void {
    this.released();
    p.reject(err);
  }

  private pump(): void {
    while (this.inFlight < this.options.maxConcurrent && this.pending.length > 0) {
      const batch = this.pending.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.commit(batch)
        .catch(() => {})
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    try {
      await this.persist(batch.map((p) => p.row));
      for (const p of batch) this.stored(p);
    } catch (err) {
      // A database that did not answer in time would not answer row by row either: retrying
      // each alone would only hold every request another timeout.
      if (batch.length === 1 || isDatabaseUnavailable(err)) {
        for (const p of batch) this.refused(p, err);
        return;
      }
      // One row must not sink the others: retry each alone, each answering for itself.
      await Promise.all(
        batch.map((p) =>
          this.persist([p.row]).then(
            () => this.stored(p),
            (e: unknown) => this.refused(p, e),
          ),
        ),
      );
    }
  }

  /** The rows and their job in one statement, its own transaction (storeDeliveries). */
  private async persist(rows: NewInboxRow[]): Promise<void> {
    await storeDeliveries(this.deps.pool, rows, await deliveriesJobStatement(this.deps.boss, rows));
  }
}
