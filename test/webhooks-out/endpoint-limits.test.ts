import { describe, expect, it } from 'vitest';
import { ENDPOINT_ACTIONS_LIMIT } from '../../src/webhooks-out/endpoints.service.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();

const create = (headers: Record<string, string>, n: number) =>
  ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers, payload: { url: `https://hooks.example.com/${n}` } });

describe('endpoints per workspace (INBOX_MAX_WEBHOOK_ENDPOINTS, default 20)', () => {
  it('the 21st → 422, also when created at once; another workspace is not affected', async () => {
    const a = await makeTenant(ctx.deps);
    const answers = await Promise.all(Array.from({ length: 22 }, (_, n) => create(a.headers, n)));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(20);
    const refused = answers.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => r.statusCode)).toEqual([422, 422]);
    expect(refused[0]!.json().error).toEqual({
      code: 'validation_failed',
      message: 'a workspace has at most 20 webhook endpoints (INBOX_MAX_WEBHOOK_ENDPOINTS): delete one first',
    });
    const b = await makeTenant(ctx.deps);
    expect((await create(b.headers, 0)).statusCode).toBe(201);
    // Deleting one makes room again.
    const id = answers.find((r) => r.statusCode === 201)!.json().data.id;
    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/webhook-endpoints/${id}`, headers: a.headers })).statusCode).toBe(200);
    expect((await create(a.headers, 99)).statusCode).toBe(201);
  });
});

describe('test and redeliver (60 a minute per workspace, together, across processes)', () => {
  it('the 61st call → 429 rate_limited with retry-after, whichever api process takes it; another workspace goes on', async () => {
    // A second api process on the same database: the count is in Postgres, not in memory.
    const other = await startTestContext({ database: ctx.database });
    try {
      const a = await makeTenant(ctx.deps);
      const id = (await create(a.headers, 1)).json().data.id;
      const test = (app: typeof ctx.app) => app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, headers: a.headers });
      const first = await test(ctx.app);
      expect(first.statusCode).toBe(202);
      const deliveryId = first.json().data.id;
      const redeliver = (app: typeof ctx.app) =>
        app.inject({ method: 'POST', url: `/v1/webhook-endpoints/deliveries/${deliveryId}/redeliver`, headers: a.headers });
      let calls = 1;
      for (; calls < ENDPOINT_ACTIONS_LIMIT.limit; calls++) {
        const app = calls % 2 === 0 ? ctx.app : other.app;
        const res = await (calls % 3 === 0 ? redeliver(app) : test(app));
        expect(res.statusCode, `call ${calls + 1}`).toBe(202);
      }
      for (const res of [await test(other.app), await redeliver(ctx.app)]) {
        expect(res.statusCode).toBe(429);
        expect(res.json().error.code).toBe('rate_limited');
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      }
      // A refused call wrote nothing: still 60 deliveries' worth of calls.
      const pings = await ctx.deps.db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint_id', '=', id)
        .executeTakeFirstOrThrow();
      expect(Number(pings.n)).toBe(1 + Math.ceil((ENDPOINT_ACTIONS_LIMIT.limit - 1) * (2 / 3)));
      const b = await makeTenant(ctx.deps);
      const bId = (await create(b.headers, 1)).json().data.id;
      expect((await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${bId}/test`, headers: b.headers })).statusCode).toBe(202);
    } finally {
      await other.close();
    }
  });

  it('the window slides: calls older than a minute no longer count', async () => {
    let now = new Date('2030-01-01T00:00:00Z');
    const clocked = await startTestContext({ database: ctx.database, now: () => now });
    try {
      const a = await makeTenant(clocked.deps);
      const id = (
        await clocked.app.inject({
          method: 'POST',
          url: '/v1/webhook-endpoints',
          headers: a.headers,
          payload: { url: 'https://hooks.example.com/x' },
        })
      ).json().data.id;
      const test = () => clocked.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, headers: a.headers });
      for (let n = 0; n < ENDPOINT_ACTIONS_LIMIT.limit; n++) expect((await test()).statusCode).toBe(202);
      now = new Date(now.getTime() + 30_000);
      const refused = await test();
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('30');
      now = new Date(now.getTime() + 30_001);
      expect((await test()).statusCode).toBe(202);
    } finally {
      await clocked.close();
    }
  });
});
