import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as outboundPartitions from '../../migrations/0067_outbound_partitions.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { listPartitions, preparePartitions } from '../../src/db/partitions.js';
import { findDispatchContexts } from '../../src/webhooks-out/deliveries.queries.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

// This file's own clone of the migrated database: taking 0067 down and up again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;
const DAY = 24 * 3600 * 1000;
const TABLES = ['webhook_events', 'webhook_deliveries', 'webhook_attempts'] as const;

const filenode = async (table: string) =>
  (await sql<{ file: string }>`SELECT pg_relation_filenode(${table}::regclass)::text AS file`.execute(db)).rows[0]!.file;

describe('migration 0067_outbound_partitions', () => {
  it('keeps every outbound row readable, in place, and the ids going on from where they were', async () => {
    const tenant = await makeTenant(ctx.deps);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'https://hooks.example.com/' },
    });
    const endpointId = res.json().data.id as number;

    await outboundPartitions.down(db as Kysely<unknown>);
    const { rows: kind } = await sql<{ relkind: string }>`
      SELECT relkind FROM pg_class WHERE oid IN ('webhook_events'::regclass, 'webhook_deliveries'::regclass, 'webhook_attempts'::regclass)`.execute(
      db,
    );
    expect(kind).toEqual(Array(3).fill({ relkind: 'r' }));
    // Rows as a release before 0067 wrote them: events of last month and of today, a delivery
    // of each (one succeeded, one pending) and an attempt of each.
    const now = Date.now();
    const events = [uuid7(now - 40 * DAY), uuid7(now)];
    await sql`
      INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
      SELECT id, ${tenant.workspace.id}, 'contact.updated', '{"old":true}', now() FROM unnest(${events}::uuid[]) AS id`.execute(db);
    const { rows: deliveries } = await sql<{ id: number }>`
      INSERT INTO webhook_deliveries (endpoint_id, event_id, status, job_id, created_at, updated_at)
      SELECT ${endpointId}, e, s, gen_random_uuid(), now(), now() FROM unnest(${events}::uuid[], ARRAY['succeeded', 'pending']) AS v(e, s)
      RETURNING id`.execute(db);
    await sql`
      INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms)
      SELECT id, now(), 500, 3 FROM unnest(${deliveries.map((d) => d.id)}::bigint[]) AS id`.execute(db);
    const before = await filenode('webhook_deliveries');

    await outboundPartitions.up(db as Kysely<unknown>);
    // Right after the migration each old table is the DEFAULT partition, untouched.
    for (const table of TABLES)
      expect(await listPartitions(db, table)).toEqual([expect.objectContaining({ name: `${table}_legacy`, isDefault: true })]);
    expect(await filenode('webhook_deliveries_legacy')).toBe(before);

    const prepared = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await preparePartitions(db, t, new Date(now))])));
    expect(prepared.webhook_events!.convertedLegacy).toBe(true);
    expect(prepared.webhook_deliveries!.convertedLegacy).toBe(true);
    // Attempts written before they had an event_id stay in the old table, the DEFAULT, until
    // retention deletes them; no day is made meanwhile.
    expect(prepared.webhook_attempts).toEqual({ created: [], convertedLegacy: false });
    expect(await filenode('webhook_deliveries_legacy')).toBe(before);
    const { rows: valid } = await sql<{ valid: boolean }>`
      SELECT indisvalid AS valid FROM pg_index
      WHERE indexrelid IN ('webhook_deliveries_id_key'::regclass, 'webhook_attempts_id_key'::regclass)`.execute(db);
    expect(valid).toEqual([{ valid: true }, { valid: true }]);
    // The old tables' primary keys (id) went: (id, event_id) serves a lookup by id alone.
    const { rows: keys } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_constraint
      WHERE contype = 'p' AND conrelid IN ('webhook_deliveries_legacy'::regclass, 'webhook_attempts_legacy'::regclass)`.execute(db);
    expect(keys).toEqual([{ n: 0 }]);

    // The delivery log reads them as before, attempts and all.
    const log = await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${endpointId}/deliveries`, headers: tenant.headers });
    expect(log.statusCode, log.body).toBe(200);
    const listed = log.json().data as { id: number; status: string; attempts: { statusCode: number }[] }[];
    expect(listed.map((d) => [d.id, d.status, d.attempts.map((a) => a.statusCode)]).sort()).toEqual(
      [
        [deliveries[0]!.id, 'succeeded', [500]],
        [deliveries[1]!.id, 'pending', [500]],
      ].sort(),
    );
    // A job queued before the upgrade names deliveries by id alone; it still finds them.
    expect((await findDispatchContexts(db, [deliveries[1]!.id])).map((c) => [c.id, c.event_id, c.body])).toEqual([
      [deliveries[1]!.id, events[1], '{"old":true}'],
    ]);
    // New deliveries go on from the old ids, into the days now made.
    const [fresh] = await db
      .transaction()
      .execute((trx) =>
        deliverEvents(
          ctx.deps.boss,
          trx,
          [{ event: { type: 'contact.updated', workspaceId: tenant.workspace.id, data: {} }, endpointIds: [endpointId] }],
          new Date(now),
        ),
      );
    expect(fresh!.id).toBeGreaterThan(deliveries[1]!.id);
    const { rows: where } = await sql<{ p: string }>`
      SELECT tableoid::regclass::text AS p FROM webhook_deliveries WHERE id = ${fresh!.id}`.execute(db);
    expect(where).toEqual([{ p: expect.stringMatching(/^webhook_deliveries_(p\d{8}|legacy)$/) }]);

    // Once the old attempts are gone, the attempts' old table becomes a range of its own too.
    await sql`DELETE FROM webhook_attempts WHERE event_id IS NULL`.execute(db);
    const attempts = await preparePartitions(db, 'webhook_attempts', new Date(now));
    expect(attempts.convertedLegacy).toBe(true);
    expect(attempts.created.length).toBeGreaterThanOrEqual(5);
  });
});
