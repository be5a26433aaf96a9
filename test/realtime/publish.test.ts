import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EVENT_STRING_MAX_CHARS,
  publishEvent,
  publishEvents,
  publishSightChanged,
  REALTIME_CHANNEL,
  type RealtimeEvent,
  SIGHT_CHANGED,
} from '../../src/realtime/publish.js';
import { useTestContext } from '../helpers/app.js';
import { waitFor } from '../helpers/webhooks.js';

const ctx = await useTestContext();
const listener = new pg.Client({ connectionString: ctx.database.url });
await listener.connect();
await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
const heard: RealtimeEvent[] = [];
listener.on('notification', (m) => heard.push(JSON.parse(m.payload ?? '{}') as RealtimeEvent));
afterAll(() => listener.end());

const heardId = (id: number) => waitFor(async () => heard.find((e) => e.data.id === id), `event ${id}`);

describe('NOTIFY payloads stay under Postgres’s 8000-byte cap', () => {
  it('a batch with a 20,000-character error commits, and the listener gets the event with the error cut', async () => {
    const error = 'x'.repeat(20_000);
    await ctx.deps.db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx); // a batch's own writes would be here
      await publishEvents(trx, [
        { type: 'message.updated', workspaceId: 1, data: { id: 9001, threadId: 7, status: 'failed', error } },
        { type: 'message.updated', workspaceId: 1, data: { id: 9002, threadId: 7, status: 'sent', error: null } },
      ]);
    });
    const cut = await heardId(9001);
    expect(cut).toMatchObject({
      type: 'message.updated',
      workspaceId: 1,
      truncated: true,
      data: { id: 9001, threadId: 7, status: 'failed' },
    });
    expect((cut.data.error as string).length).toBe(EVENT_STRING_MAX_CHARS);
    expect((cut.data.error as string).startsWith('xxx')).toBe(true);
    expect(await heardId(9002)).toEqual({
      type: 'message.updated',
      workspaceId: 1,
      data: { id: 9002, threadId: 7, status: 'sent', error: null },
    });
  });

  it('an event still too large after cutting strings goes out in its minimal form: ids only', async () => {
    const data: Record<string, unknown> = { id: 9003, threadId: 8 };
    for (let i = 0; i < 40; i++) data[`field${i}`] = 'é'.repeat(400);
    await publishEvent(ctx.deps.db, { type: 'message.created', workspaceId: 2, targetUserId: 5, data });
    expect(await heardId(9003)).toEqual({
      type: 'message.created',
      workspaceId: 2,
      targetUserId: 5,
      data: { id: 9003, threadId: 8 },
      truncated: true,
    });
  });
});

describe('sight.changed during a rolling upgrade', () => {
  // A hub of a version before sight.changed sends any event to every socket of its workspace,
  // or, when it names a targetUserId, to that user's sockets only (SPEC §4.5). The new version
  // publishes it while such hubs still run: it must be addressed to no user, or they forward it.
  it('is addressed to no user, so a hub that does not know it sends it to no socket', async () => {
    await publishSightChanged(ctx.deps.db, 77, [1, 2, 3]);
    await publishSightChanged(ctx.deps.db, 78, 'everyone');
    for (const workspaceId of [77, 78]) {
      const event = await waitFor(
        async () => heard.find((e) => e.type === SIGHT_CHANGED && e.workspaceId === workspaceId),
        'sight.changed',
      );
      expect(event.targetUserId).toBeTypeOf('number');
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM users WHERE id = ${event.targetUserId}`.execute(ctx.deps.db);
      expect(rows[0]!.n).toBe(0);
      expect(event.targetUserId).toBeLessThan(1);
    }
  });
});
