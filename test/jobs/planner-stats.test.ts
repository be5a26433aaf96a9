import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PlannerStats } from '../../src/jobs/planner-stats.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();
const QUEUE = 'planner-stats-probe';
await ctx.deps.boss.createQueue(QUEUE);
const { rows: located } = await sql<{ table: string }>`SELECT table_name AS table FROM pgboss.queue WHERE name = ${QUEUE}`.execute(
  ctx.deps.db,
);
const TABLE = `pgboss.${located[0]!.table}`;

const client = new pg.Client({ connectionString: ctx.database.url });
await client.connect();
afterAll(() => client.end());

/** Adds `n` pending jobs and makes their row counts visible to pg_stat_user_tables now. */
async function addJobs(n: number): Promise<void> {
  await ctx.deps.boss.insert(
    QUEUE,
    Array.from({ length: n }, (_, i) => ({ data: { i } })),
    { db: { executeSql: (text, values) => client.query(text, values as unknown[]) } },
  );
  await client.query('SELECT pg_stat_force_next_flush()');
  await client.query('SELECT 1');
}

/** How many rows the planner believes the table has. */
async function plannerRows(): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT greatest(reltuples, 0)::int AS n FROM pg_class WHERE oid = ${TABLE}::regclass`.execute(
    ctx.deps.db,
  );
  return rows[0]!.n;
}

const options = { intervalMs: 60_000, minChanges: 2_000, minShare: 0.2 };

describe('planner statistics of job tables', () => {
  it('analyzes a queue table that changed a lot since its last analysis, and only then', async () => {
    const stats = new PlannerStats(ctx.deps, options);
    await addJobs(1_000);
    expect(await stats.refresh(QUEUE)).toBe(false); // fewer changes than minChanges
    await addJobs(2_000);
    expect(await stats.refresh(QUEUE)).toBe(true);
    // The planner now counts every job (autovacuum may have analyzed the first thousand before).
    expect(await plannerRows()).toBeGreaterThanOrEqual(3_000);
    expect(await stats.refresh(QUEUE)).toBe(false); // just analyzed
  });

  it('lets one process analyze at a time', async () => {
    const stats = new PlannerStats(ctx.deps, options);
    await addJobs(3_000);
    const before = await plannerRows();
    const other = new pg.Client({ connectionString: ctx.database.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`inbox:analyze:${TABLE}`]);
      expect(await stats.refresh(QUEUE)).toBe(false);
      expect(await plannerRows()).toBe(before);
      await other.query('COMMIT');
      expect(await stats.refresh(QUEUE)).toBe(true);
      expect(await plannerRows()).toBeGreaterThanOrEqual(before + 3_000);
    } finally {
      await other.end();
    }
  });

  it('looks at most once per interval from the hot path', async () => {
    const stats = new PlannerStats(ctx.deps, options);
    await addJobs(3_000);
    const before = await plannerRows();
    stats.refreshSoon(QUEUE);
    await stats.settled();
    const after = await plannerRows();
    expect(after).toBeGreaterThanOrEqual(before + 3_000);
    await addJobs(3_000);
    stats.refreshSoon(QUEUE);
    await stats.settled();
    expect(await plannerRows()).toBe(after);
  });
});
