import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { ENDPOINT_IN_FLIGHT, WORKSPACE_JOBS } from '../../src/webhooks-out/dispatcher.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

const slow = await startReceiver();
const fast = await startReceiver();
afterAll(() => Promise.all([slow.close(), fast.close()]));
slow.behave('hang');
const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);

async function endpoint(url: string) {
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: tenant.headers, payload: { url } });
  return res.json().data.id as number;
}

const statusCounts = async (endpointId: number) =>
  Object.fromEntries(
    (
      await sql<{
        status: string;
        n: number;
      }>`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId} GROUP BY status`.execute(ctx.deps.db)
    ).rows.map((r) => [r.status, r.n]),
  ) as Record<string, number>;

describe('one slow receiver', () => {
  it('holds at most 10 deliveries in flight, times out after 10 s, and never delays another endpoint', async () => {
    const slowId = await endpoint(`${slow.url}/slow`);
    const fastId = await endpoint(`${fast.url}/fast`);
    const event = (n: number) => ({ type: 'ping' as const, workspaceId: tenant.workspace.id, data: { n } });

    // 1,000 events for the hanging receiver first, then 50 for the fast one.
    await ctx.deps.db.transaction().execute((trx) =>
      deliverEvents(
        ctx.deps.boss,
        trx,
        Array.from({ length: 1000 }, (_, n) => ({ event: event(n), endpointIds: [slowId] })),
        new Date(),
      ),
    );
    await waitFor(async () => slow.received.length === ENDPOINT_IN_FLIGHT, 'the slow endpoint to fill its slots');
    await ctx.deps.db.transaction().execute((trx) =>
      deliverEvents(
        ctx.deps.boss,
        trx,
        Array.from({ length: 50 }, (_, n) => ({ event: event(n), endpointIds: [fastId] })),
        new Date(),
      ),
    );

    await waitFor(async () => (await statusCounts(fastId)).succeeded === 50, 'every fast delivery', 30_000);
    expect(fast.received).toHaveLength(50);
    // Meanwhile the slow endpoint still holds exactly its ten, all unanswered.
    expect(slow.received).toHaveLength(ENDPOINT_IN_FLIGHT);
    expect((await statusCounts(slowId)).pending).toBe(1000);

    // A receiver that never answers fails the attempt at 10 s, and the delivery is retried later.
    const attempt = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('webhook_attempts')
          .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
          .select('webhook_deliveries.id')
          .where('endpoint_id', '=', slowId)
          .executeTakeFirst(),
      'a timed-out attempt',
      30_000,
    );
    // The oldest deliveries went first; the log is newest first, so the cursor walks to them.
    let timedOut:
      | {
          id: number;
          status: string;
          nextAttemptAt: string | null;
          attempts: { statusCode: number | null; error: string; durationMs: number }[];
        }
      | undefined;
    for (let cursor = ''; !timedOut; ) {
      const res = (
        await ctx.app.inject({
          method: 'GET',
          url: `/v1/webhook-endpoints/${slowId}/deliveries?limit=100${cursor}`,
          headers: tenant.headers,
        })
      ).json();
      timedOut = res.data.find((d: { id: number }) => d.id === attempt.id);
      if (!res.meta.nextCursor) break;
      cursor = `&cursor=${res.meta.nextCursor}`;
    }
    if (!timedOut) throw new Error('the delivery is not in its endpoint’s log');
    expect(timedOut.status).toBe('pending');
    expect(timedOut.attempts[0]).toMatchObject({ statusCode: null, error: 'no answer within 10 s' });
    expect(timedOut.attempts[0]!.durationMs).toBeGreaterThanOrEqual(9_900);
    expect(timedOut.nextAttemptAt).not.toBeNull();
    // The next ten go out as the first ten settle; never more than ten at once.
    await waitFor(async () => slow.received.length >= 2 * ENDPOINT_IN_FLIGHT, 'the next ten', 30_000);
    expect(slow.received.length).toBeLessThanOrEqual(2 * ENDPOINT_IN_FLIGHT);
    await slow.stop();
  }, 60_000);
});

describe('one workspace whose receivers all hang', () => {
  it('holds at most half the dispatcher’s slots: another workspace’s delivery goes out before any of its attempts has even timed out', async () => {
    const hang = await startReceiver();
    const quick = await startReceiver();
    hang.behave('hang');
    try {
      const a = await makeTenant(ctx.deps);
      const b = await makeTenant(ctx.deps);
      const create = async (headers: Record<string, string>, url: string) =>
        (await ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers, payload: { url } })).json().data.id as number;
      // Every endpoint the workspace may have, each with a job of ten deliveries that hang 10 s.
      const hanging: number[] = [];
      for (let n = 0; n < 20; n++) hanging.push(await create(a.headers, `${hang.url}/a${n}`));
      const bId = await create(b.headers, `${quick.url}/b`);
      const ping = (workspaceId: number, n: number) => ({ type: 'ping' as const, workspaceId, data: { n } });
      await ctx.deps.db.transaction().execute((trx) =>
        deliverEvents(
          ctx.deps.boss,
          trx,
          hanging.flatMap((id) =>
            Array.from({ length: ENDPOINT_IN_FLIGHT }, (_, n) => ({ event: ping(a.workspace.id, n), endpointIds: [id] })),
          ),
          new Date(),
        ),
      );
      await waitFor(async () => hang.received.length >= WORKSPACE_JOBS * ENDPOINT_IN_FLIGHT, 'the hanging workspace to take its half');

      await ctx.deps.db
        .transaction()
        .execute((trx) => deliverEvents(ctx.deps.boss, trx, [{ event: ping(b.workspace.id, 1), endpointIds: [bId] }], new Date()));
      await waitFor(async () => (await statusCounts(bId)).succeeded === 1, 'the other workspace’s delivery', 30_000);
      // Not one of the hanging attempts has finished (each takes 10 s): the delivery did not
      // wait for a slot to come free.
      const finished = await ctx.deps.db
        .selectFrom('webhook_attempts')
        .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
        .select('webhook_attempts.id')
        .where('webhook_deliveries.endpoint_id', 'in', hanging)
        .execute();
      expect(finished).toHaveLength(0);
      // Only half the slots: ten endpoints' jobs, ten deliveries each.
      expect(new Set(hang.received.map((r) => r.path)).size).toBe(WORKSPACE_JOBS);
      expect(hang.received).toHaveLength(WORKSPACE_JOBS * ENDPOINT_IN_FLIGHT);
    } finally {
      await Promise.all([hang.close(), quick.close()]);
    }
  }, 60_000);
});
