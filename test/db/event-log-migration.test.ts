import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as eventLog from '../../migrations/0062_event_log.js';
import * as outboundPartitions from '../../migrations/0067_outbound_partitions.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

// This file's own clone of the migrated database: taking 0067 and 0062 down and up again
// touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;
const DAY = 24 * 3600 * 1000;

describe('migration 0062_event_log', () => {
  it('numbers the events stored before it oldest first, whatever their place in the table', async () => {
    const tenant = await makeTenant(ctx.deps);
    const unknownDb = db as unknown as Kysely<unknown>;
    await outboundPartitions.down(unknownDb);
    await eventLog.down(unknownDb);

    // Rows as 0.2.0 left them: retention's deletes free pages that later inserts fill, so the
    // table's order is not the events' (here: yesterday's first). A change's events share one
    // created_at and went in in their order; their ids are random within the millisecond.
    const now = Date.now();
    const event = (type: string, at: number, id = uuid7(at)) => ({ id, type, at: new Date(at) });
    const sameMs = now - 2 * DAY;
    const [low, high] = [uuid7(sameMs), uuid7(sameMs)].sort();
    const stored = [
      event('thread.updated', now - DAY),
      event('contact.created', sameMs, high),
      event('thread.created', sameMs, low),
      event('message.created', now - 3 * DAY),
      event('message.updated', now - 1000),
    ];
    for (const e of stored)
      await sql`
        INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
        VALUES (${e.id}::uuid, ${tenant.workspace.id}, ${e.type},
          ${JSON.stringify({ id: `evt_${e.id.replaceAll('-', '')}`, type: e.type, createdAt: e.at.toISOString(), workspaceId: tenant.workspace.id, data: {} })},
          ${e.at})`.execute(db);

    await eventLog.up(unknownDb);
    await outboundPartitions.up(unknownDb);
    // An event written after the upgrade comes after every one of before it.
    const later = uuid7();
    await sql`
      INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
      VALUES (${later}::uuid, ${tenant.workspace.id}, 'contact.updated',
        ${JSON.stringify({ id: `evt_${later.replaceAll('-', '')}`, type: 'contact.updated', createdAt: new Date().toISOString(), workspaceId: tenant.workspace.id, data: {} })},
        now())`.execute(db);

    // Shown once no older transaction runs in the cluster (another test file's may, a moment).
    const res = await waitFor(async () => {
      const r = await ctx.app.inject({ method: 'GET', url: '/v1/events?limit=10', headers: tenant.headers });
      return r.statusCode !== 200 || r.json().data.length === 6 ? r : undefined;
    }, 'every event in the log');
    expect(res.statusCode, res.body).toBe(200);
    expect((res.json().data as { type: string }[]).map((e) => e.type)).toEqual([
      'message.created',
      'contact.created',
      'thread.created',
      'thread.updated',
      'message.updated',
      'contact.updated',
    ]);
  });
});
