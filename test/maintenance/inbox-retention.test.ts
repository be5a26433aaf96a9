import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { uuid7, uuid7Floor } from '../../src/crypto/uuid7.js';
import type { InboxStatus } from '../../src/db/types.js';
import { pruneInbox, pruneOutboundEvents } from '../../src/maintenance/inbox-retention.js';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const DAY = 24 * 3600 * 1000;
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY);
const logLines: Record<string, unknown>[] = [];
// Defaults: INBOX_RETENTION_DAYS 30, INBOX_DEAD_LETTER_RETENTION_DAYS 90.
const ctx = await useTestContext({ now: () => NOW, logLines });

/** Inbox rows as ingestion makes them: a UUIDv7 id of the moment the row was created. */
async function rows(n: number, status: InboxStatus, at: { created: number; processed?: number; updated?: number }): Promise<string[]> {
  const created = daysAgo(at.created);
  const values = Array.from({ length: n }, () => ({
    id: uuid7(created.getTime()),
    integration_key: 'whatsapp',
    app_id: null,
    event: null,
    raw_body: '{}',
    payload_json: null,
    status,
    processed_at: at.processed === undefined ? null : daysAgo(at.processed),
    created_at: created,
    updated_at: daysAgo(at.updated ?? at.processed ?? at.created),
  }));
  for (let i = 0; i < values.length; i += 1000)
    await ctx.deps.db
      .insertInto('webhook_inbox')
      .values(values.slice(i, i + 1000))
      .execute();
  return values.map((v) => v.id);
}

async function left(ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const { rows: r } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox WHERE id = ANY(${ids}::uuid[])`.execute(
    ctx.deps.db,
  );
  return r[0]!.n;
}

describe('inbox retention', () => {
  it('bounds old rows by a primary-key range: ids made before a moment sort below its floor', () => {
    const ms = NOW.getTime();
    for (let i = 0; i < 100; i++) {
      expect(uuid7(ms - 1) < uuid7Floor(ms)).toBe(true);
      expect(uuid7(ms) >= uuid7Floor(ms)).toBe(true);
    }
  });

  it('deletes processed rows and dead letters past their windows, and nothing else', async () => {
    const oldProcessed = await rows(3, 'processed', { created: 40, processed: 35 });
    const lateProcessed = await rows(1, 'processed', { created: 40, processed: 29 }); // old id, processed within the window
    const recentProcessed = await rows(2, 'processed', { created: 1, processed: 1 });
    const oldDead = await rows(2, 'dead_letter', { created: 100, updated: 91 });
    const youngDead = await rows(2, 'dead_letter', { created: 100, updated: 60 }); // past 30 days, within 90
    const received = await rows(2, 'received', { created: 400 });
    const failed = await rows(2, 'failed', { created: 400, updated: 399 });

    expect(await pruneInbox(ctx.deps.db, NOW, ctx.deps.config)).toMatchObject({ processed: 3, deadLetter: 2, more: false });
    expect(await left(oldProcessed)).toBe(0);
    expect(await left(oldDead)).toBe(0);
    expect(await left(lateProcessed)).toBe(1);
    expect(await left(recentProcessed)).toBe(2);
    expect(await left(youngDead)).toBe(2);
    expect(await left(received)).toBe(2);
    expect(await left(failed)).toBe(2);
    expect(await pruneInbox(ctx.deps.db, NOW, ctx.deps.config)).toMatchObject({ processed: 0, deadLetter: 0, more: false });
  });

  it('honours the configured windows', async () => {
    const processed = await rows(1, 'processed', { created: 8, processed: 8 });
    const dead = await rows(1, 'dead_letter', { created: 9, updated: 8 });
    await pruneInbox(ctx.deps.db, NOW, { retentionDays: 10, deadLetterRetentionDays: 10 });
    expect(await left(processed)).toBe(1);
    expect(await left(dead)).toBe(1);
    await pruneInbox(ctx.deps.db, NOW, { retentionDays: 7, deadLetterRetentionDays: 7 });
    expect(await left(processed)).toBe(0);
    expect(await left(dead)).toBe(0);
  });

  it('deletes a dead letter past a window shorter than INBOX_RETENTION_DAYS from the days still kept whole', async () => {
    // A day beyond the migration's (NOW lies before it, in the legacy range): pruning makes it.
    const today = new Date(Math.floor(Date.now() / DAY) * DAY + 20 * DAY + 3600_000);
    await pruneInbox(ctx.deps.db, today, ctx.deps.config);
    const ago = (NOW.getTime() - today.getTime()) / DAY;
    const dead = await rows(1, 'dead_letter', { created: ago });
    const processed = await rows(1, 'processed', { created: ago, processed: ago });
    const { rows: where } = await sql<{ partition: string }>`
      SELECT tableoid::regclass::text AS partition FROM webhook_inbox WHERE id = ${dead[0]}::uuid`.execute(ctx.deps.db);
    expect(where[0]!.partition).toMatch(/^webhook_inbox_p\d{8}$/); // a day: it goes whole, not row by row
    const later = new Date(today.getTime() + 2 * DAY);
    expect(await pruneInbox(ctx.deps.db, later, { retentionDays: 30, deadLetterRetentionDays: 1 })).toMatchObject({ deadLetter: 1 });
    expect(await left(dead)).toBe(0);
    expect(await left(processed)).toBe(1);
  });

  it('deletes in batches until a batch is short, and stops at the per-run bound', async () => {
    const many = await rows(2500, 'processed', { created: 50, processed: 45 });
    expect(await pruneInbox(ctx.deps.db, NOW, ctx.deps.config, { batchSize: 1000, maxBatches: 10 })).toMatchObject({
      processed: 2500,
      deadLetter: 0,
      more: false,
    });
    expect(await left(many)).toBe(0);

    const more = await rows(2500, 'processed', { created: 50, processed: 45 });
    expect(await pruneInbox(ctx.deps.db, NOW, ctx.deps.config, { batchSize: 1000, maxBatches: 2 })).toMatchObject({
      processed: 2000,
      deadLetter: 0,
      more: true,
    });
    expect(await left(more)).toBe(500);
    expect(await pruneInbox(ctx.deps.db, NOW, ctx.deps.config, { batchSize: 1000, maxBatches: 2 })).toMatchObject({
      processed: 500,
      deadLetter: 0,
      more: false,
    });
    expect(await left(more)).toBe(0);
  });

  it('runs in the maintenance job, which counts what went in inbox_rows_deleted_total and logs it', async () => {
    const processed = await rows(4, 'processed', { created: 32, processed: 31 });
    const dead = await rows(3, 'dead_letter', { created: 95, updated: 92 });
    await maintenanceQueue.worker!.handle(ctx.deps, []);
    expect(await left([...processed, ...dead])).toBe(0);
    const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(text).toMatch(/inbox_rows_deleted_total\{status="processed"\} 4\n/);
    expect(text).toMatch(/inbox_rows_deleted_total\{status="dead_letter"\} 3\n/);
    expect(logLines).toContainEqual(expect.objectContaining({ inboxRowsDeleted: { processed: 4, deadLetter: 3 }, more: false }));
  });

  it('deletes outbound webhook events past INBOX_RETENTION_DAYS with their deliveries and attempts, but none still pending', async () => {
    const tenant = await makeTenant(ctx.deps);
    const endpoint = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'https://hooks.example.com/' },
    });
    const endpointId = endpoint.json().data.id as number;
    const write = (days: number) =>
      ctx.deps.db
        .transaction()
        .execute((trx) =>
          deliverEvents(
            ctx.deps.boss,
            trx,
            [{ event: { type: 'ping', workspaceId: tenant.workspace.id, data: {} }, endpointIds: [endpointId] }],
            daysAgo(days),
          ),
        );
    const [old] = (await write(31))!;
    const [oldPending] = (await write(31))!;
    const [recent] = (await write(29))!;
    await ctx.deps.db.updateTable('webhook_deliveries').set({ status: 'succeeded' }).where('id', 'in', [old!.id, recent!.id]).execute();
    await ctx.deps.db
      .insertInto('webhook_attempts')
      .values(
        [old!, recent!].map((d) => ({
          delivery_id: d.id,
          event_id: d.event_id,
          attempted_at: daysAgo(31),
          status_code: 200,
          duration_ms: 3,
          error: null,
        })),
      )
      .execute();

    // These rows lie in the range of the tables as they were before partitioning (the database was
    // migrated after their days): deleted row by row.
    expect(await pruneOutboundEvents(ctx.deps.db, NOW, ctx.deps.config)).toMatchObject({ deleted: 1, more: false });
    const deliveries = await ctx.deps.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', endpointId).execute();
    expect(deliveries.map((d) => d.id).sort()).toEqual([oldPending!.id, recent!.id].sort());
    const attempts = await ctx.deps.db
      .selectFrom('webhook_attempts')
      .select('delivery_id')
      .where('delivery_id', 'in', [old!.id, recent!.id])
      .execute();
    expect(attempts.map((a) => a.delivery_id)).toEqual([recent!.id]);
  });
});
