import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as connectionHealth from '../../migrations/0042_connection_health.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

// This file's own clone of the migrated database: taking 0042 down and up again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;

describe('migration 0042_connection_health', () => {
  it('gives a connection that already had deliveries the time of its last inbound message', async () => {
    const tenant = await makeTenant(ctx.deps);
    const w = tenant.workspace.id;
    const used = await makeConnection(ctx.deps, w);
    const unused = await makeConnection(ctx.deps, w);
    const thread = async (connectionId: number, lastInboundAt: string | null) => {
      const contact = await db.insertInto('contacts').values({ workspace_id: w }).returning('id').executeTakeFirstOrThrow();
      await db
        .insertInto('threads')
        .values({
          workspace_id: w,
          connection_id: connectionId,
          contact_id: contact.id,
          last_inbound_at: lastInboundAt ? new Date(lastInboundAt) : null,
        })
        .execute();
    };
    await thread(used.id, '2026-02-01T10:00:00.000Z');
    await thread(used.id, '2026-02-03T10:00:00.000Z');
    // A thread an agent opened, where the contact never wrote.
    await thread(unused.id, null);

    const unknownDb = db as unknown as Kysely<unknown>;
    await connectionHealth.down(unknownDb);
    await connectionHealth.up(unknownDb);

    const res = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    const health = Object.fromEntries(
      (res.json().data as { id: number; lastDeliveryAt: string | null }[]).map((c) => [c.id, c.lastDeliveryAt]),
    );
    expect(health).toEqual({ [used.id]: '2026-02-03T10:00:00.000Z', [unused.id]: null });
  });
});
