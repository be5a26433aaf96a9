import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { listPartitions, PARTITION_DAYS_AHEAD } from '../../src/db/partitions.js';
import type { InboxStatus } from '../../src/db/types.js';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { lockPendingRows, markFailed, markProcessed } from '../../src/webhooks-in/inbox.queries.js';
import { useTestContext } from '../helpers/app.js';
import { migratedDay } from '../helpers/db.js';

const DAY = 24 * 3600 * 1000;
const dayName = (ms: number) => `webhook_inbox_p${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;
// The service's clock, moved by the tests; the database was migrated at the real time.
let clock = new Date();
const ctx = await useTestContext({ now: () => clock });
const db = ctx.deps.db;

async function insert(status: InboxStatus, at: Date, times: { processed?: Date; updated?: Date } = {}): Promise<string> {
  const id = uuid7(at.getTime());
  await db
    .insertInto('webhook_inbox')
    .values({
      id,
      integration_key: 'whatsapp',
      raw_body: '{}',
      status,
      processed_at: times.processed ?? null,
      created_at: at,
      updated_at: times.updated ?? at,
    })
    .execute();
  return id;
}

/** Which partition holds each row. */
async function partitionsOf(ids: string[]): Promise<Record<string, string>> {
  const { rows } = await sql<{ id: string; p: string }>`
    SELECT id::text, tableoid::regclass::text AS p FROM webhook_inbox WHERE id = ANY(${ids}::uuid[])`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.id, r.p]));
}

const names = async () => (await listPartitions(db, 'webhook_inbox')).map((p) => p.name);

describe('webhook_inbox partitions', () => {
  it('is partitioned by day on its id, with the days ahead and a DEFAULT made when migrating', async () => {
    const { rows } = await sql<{ strategy: string }>`
      SELECT partstrat AS strategy FROM pg_partitioned_table WHERE partrelid = 'webhook_inbox'::regclass`.execute(db);
    expect(rows).toEqual([{ strategy: 'r' }]);
    const made = await names();
    expect(made).toContain('webhook_inbox_default');
    const today = await migratedDay(db);
    for (let d = 2; d <= PARTITION_DAYS_AHEAD; d++) expect(made).toContain(dayName(today + d * DAY));
  });

  it('puts an id far outside every day in the DEFAULT partition, and finds it there by its index', async () => {
    const far = await insert('received', new Date('2101-03-04T05:06:07Z'));
    const old = await insert('received', new Date('1999-01-01T00:00:00Z'));
    const now = await insert('received', new Date());
    expect(await partitionsOf([far, now])).toEqual({
      [far]: 'webhook_inbox_default',
      [now]: expect.stringMatching(/^webhook_inbox_(p\d{8}|legacy)$/),
    });
    expect(Object.values(await partitionsOf([old]))).toHaveLength(1);
    // A lookup by id reads one partition's primary key, not every partition.
    for (const id of [far, now]) {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT status FROM webhook_inbox WHERE id = ${id}::uuid`.execute(db);
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/Index Scan using webhook_inbox_\w*pkey on webhook_inbox_\w+/);
      expect(plan).not.toMatch(/Append/);
    }
  });

  it("processes a batch in its own day's partition only: another day locked does not hold it up", async () => {
    const ids = [await insert('received', new Date()), await insert('received', new Date())];
    const held = await ctx.deps.pool.connect();
    try {
      await held.query('BEGIN');
      await held.query(`LOCK TABLE ${dayName(Date.now() + 3 * DAY)} IN ACCESS EXCLUSIVE MODE`);
      const now = new Date();
      await db.transaction().execute(async (trx) => {
        // A statement that opened every partition would wait for the lock above, and fail.
        await sql`SET LOCAL lock_timeout = '300ms'`.execute(trx);
        expect(await lockPendingRows(trx, ids)).toHaveLength(2);
        await markFailed(trx, [{ id: ids[0]!, appId: null, status: 'failed', attemptCount: 1, nextRetryAt: now, lastError: 'x' }], now);
        await markProcessed(trx, [{ id: ids[1]!, appId: null }], now);
      });
      // Two ids of one millisecond sort by their random bits: read each by its own id.
      const { rows } = await sql<{
        id: string;
        status: string;
      }>`SELECT id, status FROM webhook_inbox WHERE id = ANY(${ids}::uuid[])`.execute(db);
      const status = new Map(rows.map((r) => [r.id, r.status]));
      expect(ids.map((id) => status.get(id))).toEqual(['failed', 'processed']);
    } finally {
      await held.query('ROLLBACK');
      held.release();
    }
  });

  it('processes a batch whose ids lie in several partitions and come in any order or spelling', async () => {
    const today = await insert('received', new Date());
    const ahead = await insert('received', new Date(Date.now() + 3 * DAY));
    const far = await insert('received', new Date('2101-03-04T05:06:07Z'));
    const parts = await partitionsOf([today, ahead, far]);
    expect(new Set(Object.values(parts)).size).toBe(3);
    // Neither first nor last is the lowest or the highest; one id in capitals.
    const batch = [ahead.toUpperCase(), far, today];
    const now = new Date();
    await db.transaction().execute(async (trx) => {
      expect((await lockPendingRows(trx, batch)).map((r) => r.id).sort()).toEqual([today, ahead, far].sort());
      await markProcessed(
        trx,
        [
          { id: ahead.toUpperCase(), appId: null },
          { id: far, appId: null },
        ],
        now,
      );
      await markFailed(trx, [{ id: today, appId: null, status: 'failed', attemptCount: 1, nextRetryAt: now, lastError: 'x' }], now);
    });
    // Braces are another spelling of a UUID: such a batch is read without the id bounds.
    const braced = await insert('received', new Date());
    // (`today` failed: it is still work to do.)
    expect((await lockPendingRows(db, [`{${braced}}`, today])).map((r) => r.id).sort()).toEqual([braced, today].sort());
    const { rows } = await sql<{ id: string; status: string }>`
      SELECT id::text, status FROM webhook_inbox WHERE id = ANY(${[today, ahead, far]}::uuid[])`.execute(db);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({ [today]: 'failed', [ahead]: 'processed', [far]: 'processed' });
  });

  it('makes days ahead of the clock and drops a day once it expired, keeping the rows that must stay', async () => {
    // A day beyond those made when migrating: the job makes it (and the week after) first.
    const day = new Date(Math.floor(Date.now() / DAY) * DAY + 20 * DAY + 3600_000);
    clock = day;
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    const ahead = await names();
    for (let d = 0; d <= PARTITION_DAYS_AHEAD; d++) expect(ahead).toContain(dayName(day.getTime() + d * DAY));

    const processed = await insert('processed', day, { processed: day });
    const lateProcessed = await insert('processed', day, { processed: new Date(day.getTime() + 25 * DAY) });
    const received = await insert('received', day);
    const youngDead = await insert('dead_letter', day, { updated: day });
    expect(Object.values(await partitionsOf([processed, lateProcessed, received, youngDead]))).toEqual(
      Array(4).fill(dayName(day.getTime())),
    );

    // Thirty-one days on (INBOX_RETENTION_DAYS 30): the day lies wholly before the cutoff.
    clock = new Date(day.getTime() + 31 * DAY);
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    const after = await names();
    expect(after).not.toContain(dayName(day.getTime()));
    expect(after).toContain(dayName(day.getTime() + DAY)); // not wholly expired yet
    for (let d = 0; d <= PARTITION_DAYS_AHEAD; d++) expect(after).toContain(dayName(clock.getTime() + d * DAY));
    const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/inbox_webhook_inbox_partitions_dropped_total \d+\n/);
    expect(text).not.toMatch(/inbox_webhook_inbox_partitions_dropped_total 0\n/);
    // Work still to do, a dead letter within its 90 days and a row processed within 30 days stay.
    expect(await partitionsOf([processed, lateProcessed, received, youngDead])).toEqual({
      [lateProcessed]: 'webhook_inbox_default',
      [received]: 'webhook_inbox_default',
      [youngDead]: 'webhook_inbox_default',
    });

    // Kept rows are pruned row by row from the DEFAULT once their own time is up.
    clock = new Date(day.getTime() + 91 * DAY);
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    expect(Object.keys(await partitionsOf([lateProcessed, received, youngDead]))).toEqual([received]);
  });
});
