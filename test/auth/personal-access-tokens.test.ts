import { describe, expect, it, vi } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// Every route the app registers (test/helpers/route-log.ts), so a route added later is walked too.
const { routes, fastifyWithRouteLog } = await vi.hoisted(() => import('../helpers/route-log.js'));
vi.mock('fastify', fastifyWithRouteLog);

// A clock the tests can move forward; JWTs are checked against it too (session expiry).
let offsetMs = 0;
const ctx = await useTestContext({ now: () => new Date(Date.now() + offsetMs) });
const tenant = await makeTenant(ctx.deps);
const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'pat@acme.test', roles: ['admin'] });
const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: 'pat@acme.test', password } })).json()
  .access_token as string;
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('personal-access tokens', () => {
  it('are created (shown once), listed without the secret, accepted by GET /api/user/user, and revoked', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/personal-access-tokens',
      headers: bearer(jwt),
      payload: { name: 'cli' },
    });
    expect(created.statusCode).toBe(201);
    const { token, id } = created.json().data;
    expect(token).toMatch(/^inbox_pat_/);
    const list = await ctx.app.inject({ method: 'GET', url: '/v1/personal-access-tokens', headers: bearer(jwt) });
    expect(list.json().data).toContainEqual(expect.objectContaining({ id, name: 'cli', prefix: token.slice(0, 15) }));
    expect(list.body).not.toContain(token);

    const me = await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.email).toBe('pat@acme.test');

    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/personal-access-tokens/${id}`, headers: bearer(jwt) })).statusCode).toBe(
      200,
    );
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(token) })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/personal-access-tokens/${id}`, headers: bearer(jwt) })).statusCode).toBe(
      404,
    );
  });

  it('work only where allowed: not on ordinary /v1 routes, and they cannot mint more tokens', async () => {
    const { token } = (
      await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(jwt), payload: { name: 'narrow' } })
    ).json().data;
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: bearer(token) })).statusCode).toBe(401);
    expect(
      (await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(token), payload: { name: 'x' } }))
        .statusCode,
    ).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/personal-access-tokens', headers: tenant.headers })).statusCode).toBe(403);
  });

  it('are refused (401) on every /v1 route but the socket, one’s own settings and 2FA status included', async () => {
    const { token } = (
      await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(jwt), payload: { name: 'walk' } })
    ).json().data;
    // The socket takes one; visitors, the accounts webhook and signed links take no bearer of a user.
    const elsewhere = /^\/v1\/(realtime$|livechat\/|accounts\/webhook$|messages\/:id\/html$)/;
    const walked = [...new Set(routes.map((r) => `${r.method} ${r.url}`))].filter(
      (r) => !r.startsWith('HEAD ') && / \/v1\//.test(r) && !elsewhere.test(r.split(' ')[1]!),
    );
    expect(walked).toEqual(expect.arrayContaining(['PATCH /v1/users/me', 'GET /v1/users/me/2fa']));
    for (const route of walked) {
      const [method, url] = route.split(' ') as ['GET', string];
      const res = await ctx.app.inject({ method, url: url.replace(/:[A-Za-z_]+/g, '1'), headers: bearer(token) });
      expect(res.statusCode, route).toBe(401);
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(token) })).statusCode).toBe(200);
  });

  it('expire: 90 days by default, 1..365 on request, refused once expired like a revoked one', async () => {
    const create = (payload: object) =>
      ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(jwt), payload });
    const before = Date.now();
    const byDefault = (await create({ name: 'default' })).json().data;
    const days = (iso: string) => (Date.parse(iso) - before) / 86_400_000;
    expect(days(byDefault.expiresAt)).toBeGreaterThanOrEqual(90);
    expect(days(byDefault.expiresAt)).toBeLessThan(90.01);
    for (const bad of [0, 366, 1.5, '30']) {
      const res = await create({ name: 'bad', expiresInDays: bad });
      expect(res.statusCode, String(bad)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await create({ name: 'max', expiresInDays: 365 })).statusCode).toBe(201);
    const short = (await create({ name: 'short', expiresInDays: 1 })).json().data;
    expect(days(short.expiresAt)).toBeLessThan(1.01);
    const listed = (await ctx.app.inject({ method: 'GET', url: '/v1/personal-access-tokens', headers: bearer(jwt) })).json().data;
    expect(listed).toContainEqual(expect.objectContaining({ id: short.id, expiresAt: short.expiresAt }));

    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(short.token) })).statusCode).toBe(200);
    offsetMs = 86_400_000 + 1000; // a day and a second later
    try {
      const expired = await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(short.token) });
      expect(expired.statusCode).toBe(401);
      expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(byDefault.token) })).statusCode).toBe(200);
    } finally {
      offsetMs = 0;
    }
  });
});
