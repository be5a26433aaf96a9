import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import type { SearchIndexing } from '../jobs/queue.js';

/**
 * Gives at most `limit` messages not indexed yet their search vector, oldest first, and says
 * how many it did. Rows another indexer holds are skipped, not waited for; a message whose
 * text changed meanwhile is reset by the table's trigger and comes back on a later pass.
 */
export async function indexUnindexed(db: Executor, limit: number): Promise<number> {
  const result = await sql`
    UPDATE messages AS m SET search_vector = to_tsvector('simple', m.text)
    FROM (
      SELECT id FROM messages WHERE search_vector IS NULL
      ORDER BY created_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) AS pending
    WHERE m.id = pending.id`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/**
 * `batch`: messages one UPDATE indexes (about 120 µs each at 1 KB of text). `idleMs`: how long
 * no delivery batch of this process must have been in flight before indexing starts, so a
 * drain is not slowed by it. `maxDeferMs`: the longest indexing waits for that, so a load that
 * never lets up still gets its messages indexed (one batch, then it yields again).
 * `sweepMs`: how often the indexer looks for messages it was not told of (another process's
 * replies and notes, what a process that died left).
 */
export interface SearchIndexTuning {
  batch: number;
  idleMs: number;
  maxDeferMs: number;
  sweepMs: number;
}

export const SEARCH_INDEX_TUNING: SearchIndexTuning = { batch: 500, idleMs: 250, maxDeferMs: 30_000, sweepMs: 10_000 };

/**
 * The worker's search indexer: fills the search vector of new messages after they are stored
 * (docs/performance.md, "Search, indexed after the batch"). Search is exact before that (it
 * tests an unindexed message's text itself), so the indexer only decides when the parsing is
 * paid: after the delivery batches that wrote the messages, not inside them. One pass at a
 * time per process; several processes share the rows through SKIP LOCKED.
 */
export class SearchIndexer implements SearchIndexing {
  private inFlight = 0;
  private idleSince = Date.now();
  /** When work was first signalled and not yet done; undefined when nothing is known to wait. */
  private waitingSince: number | undefined;
  /** Set by every signal, cleared as a pass begins: a signal during a pass means rows it may not have seen. */
  private signalled = false;
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  private stopped = false;
  /** How many times a pass gave way to a delivery batch in flight: what shows indexing waited. */
  deferrals = 0;

  constructor(
    private readonly deps: Pick<Deps, 'db' | 'log'>,
    private readonly tuning: SearchIndexTuning = SEARCH_INDEX_TUNING,
  ) {}

  /** Starts with a sweep (what a stopped process left), then sweeps every `sweepMs`. */
  start(): void {
    this.signal();
    this.sweeper = setInterval(() => this.signal(), this.tuning.sweepMs);
    this.sweeper.unref();
  }

  begin(): void {
    this.inFlight++;
  }

  end(): void {
    this.inFlight--;
    if (this.inFlight === 0) this.idleSince = Date.now();
    this.signal();
  }

  /** Stops sweeping and waits for the pass in hand; what is left is swept by the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    await this.pass;
  }

  private signal(): void {
    this.waitingSince ??= Date.now();
    this.signalled = true;
    this.wake(this.tuning.idleMs);
  }

  private wake(ms: number): void {
    if (this.stopped || this.timer !== undefined || this.pass !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pass = this.run().finally(() => {
        this.pass = undefined;
      });
    }, ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    const { batch, idleMs, maxDeferMs, sweepMs } = this.tuning;
    while (!this.stopped && this.waitingSince !== undefined) {
      const now = Date.now();
      const overdue = now - this.waitingSince >= maxDeferMs;
      if (!overdue && (this.inFlight > 0 || now - this.idleSince < idleMs)) {
        this.deferrals++;
        break;
      }
      let indexed: number;
      this.signalled = false;
      try {
        indexed = await indexUnindexed(this.deps.db, batch);
      } catch (err) {
        this.deps.log.warn({ err }, 'search indexing failed; the next sweep tries again');
        // The sweep's next signal starts again from here; nothing is lost, the rows stay NULL.
        this.waitingSince = undefined;
        return;
      }
      if (indexed < batch && !this.signalled) this.waitingSince = undefined;
      else if (overdue) this.waitingSince = Date.now();
    }
    if (this.waitingSince !== undefined) {
      this.pass = undefined;
      this.wake(Math.min(idleMs, sweepMs));
    }
  }
}
