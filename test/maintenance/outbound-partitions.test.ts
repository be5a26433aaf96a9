import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../src/db/database.js';
import { listPartitions, PARTITION_DAYS_AHEAD } from '../../src/db/partitions.js';
import { pruneOutboundEvents } from '../../src/maintenance/inbox-retention.js';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { findDispatchContexts, recordAttempts } from '../../src/webhooks-out/deliveries.queries.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { migratedDay } from '../helpers/db.js';
import { makeTenant } from '../helpers/factories.js';

const DAY = 24 * 3600 * 1000;
const TABLES = ['webhook_events', 'webhook_deliveries', 'webhook_attempts'] as const;
const dayName = (table: string, ms: number) => `${table}_p${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;
// The service's clock, moved by the retention test; the database was migrated at the real time.
let clock = new Date();
const ctx = await useTestContext({ now: () => clock });
const db = ctx.deps.db;
// The days ahead count from the day the template was migrated, which a run may have left.
const today = await migratedDay(db);
const tenant = await makeTenant(ctx.deps);

async function endpoint(): Promise<number> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: tenant.headers,
    payload: { url: 'https://hooks.example.com/' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as number;
}

/** One event made at `at`, with a delivery to each endpoint, as the outbox writes them. */
async function send(endpointIds: number[], at: Date, trx: Executor = db, marker = '') {
  const written = async (t: Executor) =>
    deliverEvents(
      ctx.deps.boss,
      t,
      [{ event: { type: 'contact.updated', workspaceId: tenant.workspace.id, data: { marker } }, endpointIds }],
      at,
    );
  return trx === db ? db.transaction().execute(written) : written(trx);
}

/** An attempt of a delivery, as the dispatcher records it. */
async function attempt(d: { id: number; event_id: string }, at: Date) {
  await db
    .insertInto('webhook_attempts')
    .values({ delivery_id: d.id, event_id: d.event_id, attempted_at: at, status_code: 500, duration_ms: 3, error: 'HTTP 500' })
    .execute();
}

/** Which partition of `table` holds each row of `column` in `ids`. */
async function partitionsOf(table: string, column: string, ids: (string | number)[]): Promise<Record<string, string>> {
  const { rows } = await sql<{ id: string; p: string }>`
    SELECT ${sql.ref(column)}::text AS id, tableoid::regclass::text AS p FROM ${sql.table(table)}
    WHERE ${sql.ref(column)}::text = ANY(${ids.map(String)}::text[])`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.id, r.p]));
}

const names = async (table: (typeof TABLES)[number]) => (await listPartitions(db, table)).map((p) => p.name);

describe('outbound webhook partitions', () => {
  it("partitions events, deliveries and attempts by the event's day, with the days ahead and a unique (id, event_id)", async () => {
    for (const table of TABLES) {
      const made = await names(table);
      expect(made).toContain(`${table}_default`);
      for (let d = 2; d <= PARTITION_DAYS_AHEAD; d++) expect(made).toContain(dayName(table, today + d * DAY));
    }
    const { rows } = await sql<{ name: string; valid: boolean }>`
      SELECT indexrelid::regclass::text AS name, indisvalid AS valid FROM pg_index
      WHERE indexrelid IN ('webhook_deliveries_id_key'::regclass, 'webhook_attempts_id_key'::regclass) ORDER BY 1`.execute(db);
    expect(rows).toEqual([
      { name: 'webhook_attempts_id_key', valid: true },
      { name: 'webhook_deliveries_id_key', valid: true },
    ]);

    // An event, its deliveries and their attempts lie in the same day.
    const at = new Date(today + 3 * DAY + 3600_000);
    const [d] = (await send([await endpoint()], at))!;
    await attempt(d!, at);
    expect(await partitionsOf('webhook_events', 'id', [d!.event_id])).toEqual({ [d!.event_id]: dayName('webhook_events', at.getTime()) });
    expect(await partitionsOf('webhook_deliveries', 'id', [d!.id])).toEqual({ [d!.id]: dayName('webhook_deliveries', at.getTime()) });
    expect(await partitionsOf('webhook_attempts', 'delivery_id', [d!.id])).toEqual({ [d!.id]: dayName('webhook_attempts', at.getTime()) });
    // Delivery ids go on from the identity sequence, one number after another.
    const [next] = (await send([d!.endpoint_id], at))!;
    expect(next!.id).toBeGreaterThan(d!.id);
  });

  it("reads and settles a job's deliveries in their events' days only: another day locked does not hold the send path up", async () => {
    const endpointId = await endpoint();
    const at = new Date();
    const deliveries = [...(await send([endpointId], at))!, ...(await send([endpointId], at))!];
    const ids = deliveries.map((d) => d.id);
    const eventIds = deliveries.map((d) => d.event_id);
    const held = await ctx.deps.pool.connect();
    try {
      await held.query('BEGIN');
      for (const table of TABLES) await held.query(`LOCK TABLE ${dayName(table, today + 4 * DAY)} IN ACCESS EXCLUSIVE MODE`);
      await db.transaction().execute(async (trx) => {
        // A statement that opened every partition would wait for the locks above, and fail.
        await sql`SET LOCAL lock_timeout = '300ms'`.execute(trx);
        const contexts = await findDispatchContexts(trx, ids, eventIds);
        expect(contexts.map((c) => [c.id, c.event_id]).sort()).toEqual(deliveries.map((d) => [d.id, d.event_id]).sort());
        const changed = await recordAttempts(
          trx,
          contexts.map((c) => ({ deliveryId: c.id, eventId: c.event_id, attemptedAt: at, statusCode: 200, durationMs: 4, error: null })),
          contexts.map((c) => ({
            id: c.id,
            eventId: c.event_id,
            jobId: c.job_id!,
            status: 'succeeded' as const,
            attemptCount: 1,
            nextJobId: null,
            nextAttemptAt: null,
          })),
          at,
        );
        expect(changed.map((c) => c.status)).toEqual(['succeeded', 'succeeded']);
      });
    } finally {
      await held.query('ROLLBACK');
      held.release();
    }
    const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'event_id']).where('delivery_id', 'in', ids).execute();
    expect(attempts.map((a) => [a.delivery_id, a.event_id]).sort()).toEqual(deliveries.map((d) => [d.id, d.event_id]).sort());
  });

  it('deletes the attempts of an endpoint deleted, with its deliveries, in the same transaction', async () => {
    const gone = await endpoint();
    const kept = await endpoint();
    const at = new Date();
    const deliveries = (await send([gone, kept], at))!;
    for (const d of deliveries) await attempt(d, at);
    const res = await ctx.app.inject({ method: 'DELETE', url: `/v1/webhook-endpoints/${gone}`, headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    const left = await db
      .selectFrom('webhook_attempts')
      .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
      .select('webhook_deliveries.endpoint_id')
      .where(
        'webhook_attempts.delivery_id',
        'in',
        deliveries.map((d) => d.id),
      )
      .execute();
    expect(left.map((a) => a.endpoint_id)).toEqual([kept]);
    const orphans = await db
      .selectFrom('webhook_attempts')
      .select('id')
      .where(
        'delivery_id',
        'in',
        deliveries.map((d) => d.id),
      )
      .execute();
    expect(orphans).toHaveLength(1);
  });

  it('reads the event log across day partitions in commit order', async () => {
    const later = new Date(today + 3 * DAY + 7200_000);
    const earlier = new Date(today + 2 * DAY + 7200_000);
    let wrote!: () => void;
    let release!: () => void;
    const written = new Promise<void>((r) => {
      wrote = r;
    });
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The first transaction writes an event of the later day and commits last.
    const first = db.transaction().execute(async (trx) => {
      await send([], later, trx, 'first');
      wrote();
      await gate;
    });
    await written;
    await send([], earlier, db, 'second');
    const log = async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/events?types=contact.updated&limit=100', headers: tenant.headers });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().data as { id: string; data: { marker: string } }[]).filter((e) => e.data.marker);
    };
    // Until the first commits, neither shows: the second lies after a position still open.
    expect(await log()).toEqual([]);
    release();
    await first;
    // Visible once no older transaction runs anywhere in the cluster: another test file's
    // transaction in its own database holds the snapshot's xmin back too, for a moment.
    await expect.poll(async () => (await log()).map((e) => e.data.marker)).toEqual(['first', 'second']);
    const events = await log();
    const ids = events.map(
      (e) => `${e.id.slice(4, 12)}-${e.id.slice(12, 16)}-${e.id.slice(16, 20)}-${e.id.slice(20, 24)}-${e.id.slice(24)}`,
    );
    expect(Object.values(await partitionsOf('webhook_events', 'id', ids)).sort()).toEqual(
      [dayName('webhook_events', earlier.getTime()), dayName('webhook_events', later.getTime())].sort(),
    );
  });

  it('drops an expired day of attempts, deliveries and events whole, keeping pending deliveries with their attempts and events', async () => {
    // A day beyond those made when migrating: retention makes it (and the week after) first.
    const day = new Date(today + 20 * DAY + 3600_000);
    clock = day;
    const made = await pruneOutboundEvents(db, clock, ctx.deps.config);
    for (const table of TABLES) expect(made.partitionsCreated).toContain(dayName(table, day.getTime() + PARTITION_DAYS_AHEAD * DAY));

    const endpointId = await endpoint();
    const [done] = (await send([endpointId], day))!;
    const [pending] = (await send([endpointId], day))!;
    const [young] = (await send([endpointId], new Date(day.getTime() + DAY)))!;
    for (const d of [done!, pending!, young!]) await attempt(d, day);
    await db.updateTable('webhook_deliveries').set({ status: 'succeeded' }).where('id', 'in', [done!.id, young!.id]).execute();

    // Thirty-one days on (INBOX_RETENTION_DAYS 30): the day lies wholly before the cutoff.
    clock = new Date(day.getTime() + 31 * DAY);
    const pruned = await pruneOutboundEvents(db, clock, ctx.deps.config);
    for (const table of TABLES) {
      expect(pruned.partitionsDropped).toContain(dayName(table, day.getTime()));
      expect(await names(table)).not.toContain(dayName(table, day.getTime()));
      expect(await names(table)).toContain(dayName(table, day.getTime() + DAY)); // not wholly expired yet
    }
    expect(pruned.rowsKept).toBeGreaterThanOrEqual(3);
    // The pending delivery, its attempt and its event moved to the DEFAULT partitions.
    expect(await partitionsOf('webhook_deliveries', 'id', [done!.id, pending!.id, young!.id])).toEqual({
      [pending!.id]: 'webhook_deliveries_default',
      [young!.id]: dayName('webhook_deliveries', day.getTime() + DAY),
    });
    expect(await partitionsOf('webhook_attempts', 'delivery_id', [done!.id, pending!.id, young!.id])).toEqual({
      [pending!.id]: 'webhook_attempts_default',
      [young!.id]: dayName('webhook_attempts', day.getTime() + DAY),
    });
    expect(await partitionsOf('webhook_events', 'id', [done!.event_id, pending!.event_id, young!.event_id])).toEqual({
      [pending!.event_id]: 'webhook_events_default',
      [young!.event_id]: dayName('webhook_events', day.getTime() + DAY),
    });
    // The kept delivery still goes out: its job finds it, with its body.
    const [ctxOfPending] = await findDispatchContexts(db, [pending!.id], [pending!.event_id]);
    expect(ctxOfPending).toMatchObject({ id: pending!.id, status: 'pending', job_id: pending!.job_id });

    // Once it is settled, the next run deletes it row by row from the DEFAULT, attempts and all.
    await db.updateTable('webhook_deliveries').set({ status: 'succeeded' }).where('id', '=', pending!.id).execute();
    expect(await pruneOutboundEvents(db, clock, ctx.deps.config)).toMatchObject({ deleted: 1, more: false });
    expect(await partitionsOf('webhook_deliveries', 'id', [pending!.id])).toEqual({});
    expect(await partitionsOf('webhook_attempts', 'delivery_id', [pending!.id])).toEqual({});
    expect(await partitionsOf('webhook_events', 'id', [pending!.event_id])).toEqual({});
  });

  it('counts the days the maintenance job drops in inbox_outbound_webhook_partitions_dropped_total', async () => {
    const dropped = async () => (await ctx.deps.metrics.outboundPartitionsDropped.get()).values[0]?.value ?? 0;
    const day = new Date(today + 60 * DAY + 3600_000);
    clock = day;
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    const [sent] = (await send([await endpoint()], day))!;
    await db.updateTable('webhook_deliveries').set({ status: 'succeeded' }).where('id', '=', sent!.id).execute();
    const before = await dropped();
    clock = new Date(day.getTime() + 31 * DAY);
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    expect(await names('webhook_events')).not.toContain(dayName('webhook_events', day.getTime()));
    // Each day gone counts once, whichever of its three tables' partitions went with it.
    expect(await dropped()).toBeGreaterThan(before);
    const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(new RegExp(`inbox_outbound_webhook_partitions_dropped_total ${await dropped()}\n`));
  });
});
