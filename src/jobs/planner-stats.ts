import { sql } from 'kysely';
import { tryLockKey } from '../db/advisory-locks.js';
import type { Deps } from '../deps.js';
import { BOSS_SCHEMA } from './boss.js';

export interface PlannerStatsOptions {
  /** At most one look at a queue's table per this many milliseconds, per process. */
  intervalMs: number;
  /** Rows changed since the last analysis before one is worth running... */
  minChanges: number;
  /** ...and as a share of the rows the planner believes the table has. */
  minShare: number;
}

/**
 * Keeps the planner's picture of a queue's job table current while a backlog drains.
 *
 * pg-boss fetches the oldest pending jobs with `ORDER BY priority DESC, created_on LIMIT n`,
 * which its pending-jobs index serves directly, but only if the planner knows the table is
 * large. Autovacuum re-analyzes a table at most once a minute, so after a burst of tens of
 * thousands of jobs the planner still believes the table is small, reads every pending job
 * and sorts them all on every fetch: each fetch costs O(backlog), and a backlog drains the
 * slower the larger it is (measured: 50–70 ms per fetch of 250 with 80,000 pending, against
 * 6–10 ms once the table is analyzed). A worker whose fetch came back full asks here; the
 * table is analyzed when it has changed a lot since its last analysis, by one process at a
 * time (an advisory lock), and each process looks at most once per interval.
 */
export class PlannerStats {
  private readonly nextLook = new Map<string, number>();
  private running: Promise<boolean> | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly options: PlannerStatsOptions = { intervalMs: 10_000, minChanges: 10_000, minShare: 0.2 },
  ) {}

  /** Fire and forget, from a worker's hot path; never throws. */
  refreshSoon(queue: string): void {
    if (this.running || Date.now() < (this.nextLook.get(queue) ?? 0)) return;
    this.nextLook.set(queue, Date.now() + this.options.intervalMs);
    this.running = this.refresh(queue)
      .catch((err: unknown) => {
        this.deps.log.warn({ err, queue }, 'could not refresh planner statistics of a job table');
        return false;
      })
      .finally(() => (this.running = undefined));
  }

  /** Waits for a refresh started by refreshSoon, if any; for shutdown and tests. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Analyzes `queue`'s job table if it is stale; says whether it did. */
  async refresh(queue: string): Promise<boolean> {
    return this.deps.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ schema: string; table: string; changed: string; tuples: number }>`
        SELECT n.nspname AS schema, c.relname AS table, s.n_mod_since_analyze AS changed, greatest(c.reltuples, 0) AS tuples
        FROM ${sql.id(BOSS_SCHEMA, 'queue')} q
        JOIN pg_namespace n ON n.nspname = ${BOSS_SCHEMA}
        JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = q.table_name
        JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE q.name = ${queue}`.execute(trx);
      const t = rows[0];
      if (!t) return false;
      const changed = Number(t.changed);
      if (changed < this.options.minChanges || changed < this.options.minShare * t.tuples) return false;
      // Several workers may notice the same backlog; one analysis is enough.
      if (!(await tryLockKey(trx, `inbox:analyze:${t.schema}.${t.table}`))) return false;
      await sql`ANALYZE ${sql.id(t.schema, t.table)}`.execute(trx);
      this.deps.log.info({ queue, table: `${t.schema}.${t.table}`, changed, tuples: t.tuples }, 'analyzed a job table during a backlog');
      return true;
    });
  }
}
