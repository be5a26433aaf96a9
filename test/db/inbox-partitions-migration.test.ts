import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as inboxPartitions from '../../migrations/0066_inbox_partitions.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { listPartitions, preparePartitions } from '../../src/db/partitions.js';
import { useTestContext } from '../helpers/app.js';

// This file's own clone of the migrated database: taking 0066 down and up again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;
const DAY = 24 * 3600 * 1000;

async function insertRows(ids: string[]) {
  await db
    .insertInto('webhook_inbox')
    .values(ids.map((id, i) => ({ id, integration_key: 'whatsapp', raw_body: `{"n":${i}}`, status: 'received' as const })))
    .execute();
}

describe('migration 0066_inbox_partitions', () => {
  it('keeps every row of the table it partitions, in place, and makes the days after it', async () => {
    await inboxPartitions.down(db as Kysely<unknown>);
    const { rows: kind } = await sql<{ relkind: string }>`SELECT relkind FROM pg_class WHERE oid = 'webhook_inbox'::regclass`.execute(db);
    expect(kind).toEqual([{ relkind: 'r' }]);
    const now = Date.now();
    // Rows of last month, of today, and two an older release could have left: a UUIDv4 id and
    // an id from a clock a year ahead. Both lie above any range the old table can take.
    const ids = [uuid7(now - 40 * DAY), uuid7(now - 1000), uuid7(now), `f${randomUUID().slice(1)}`, uuid7(now + 365 * DAY)];
    await insertRows(ids);
    const { rows: before } = await sql<{ file: string }>`SELECT pg_relation_filenode('webhook_inbox')::text AS file`.execute(db);

    await inboxPartitions.up(db as Kysely<unknown>);
    // Right after the migration the old table is the DEFAULT partition, untouched.
    expect(await listPartitions(db, 'webhook_inbox')).toEqual([expect.objectContaining({ name: 'webhook_inbox_legacy', isDefault: true })]);
    const { rows: after } = await sql<{ file: string }>`SELECT pg_relation_filenode('webhook_inbox_legacy')::text AS file`.execute(db);
    expect(after).toEqual(before);
    await insertRows([uuid7(now + 1)]); // ingestion goes on between the two steps

    const prepared = await preparePartitions(db, 'webhook_inbox', new Date(now));
    expect(prepared.convertedLegacy).toBe(true);
    const partitions = await listPartitions(db, 'webhook_inbox');
    const legacy = partitions.find((p) => p.name === 'webhook_inbox_legacy')!;
    expect(legacy).toMatchObject({ isDefault: false, from: undefined, to: Math.floor(now / DAY) * DAY + 2 * DAY });
    expect(partitions.filter((p) => p.isDefault).map((p) => p.name)).toEqual(['webhook_inbox_default']);
    expect(prepared.created.length).toBeGreaterThanOrEqual(5);

    const { rows } = await sql<{ id: string; p: string; raw_body: string }>`
      SELECT id::text, tableoid::regclass::text AS p, raw_body FROM webhook_inbox ORDER BY raw_body`.execute(db);
    expect(rows).toHaveLength(ids.length + 1);
    const where = Object.fromEntries(rows.map((r) => [r.id, r.p]));
    expect(ids.slice(0, 3).map((id) => where[id])).toEqual(Array(3).fill('webhook_inbox_legacy'));
    expect(where[ids[3]!]).toBe('webhook_inbox_default');
    expect(where[ids[4]!]).toBe('webhook_inbox_default');
    // The old table's rows were never rewritten.
    const { rows: still } = await sql<{ file: string }>`SELECT pg_relation_filenode('webhook_inbox_legacy')::text AS file`.execute(db);
    expect(still).toEqual(before);
  });
});
