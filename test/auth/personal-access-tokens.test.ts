import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'pat@acme.test', roles: ['admin'] });
const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: 'pat@acme.test', password } })).json().access_token as string;
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('personal-access tokens', () => {
  it('are created (shown once), listed without the secret, accepted by GET /api/user/user, and revoked', async () => {
    const created = await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(jwt), payload: { name: 'cli' } });
    expect(created.statusCode).toBe(201);
    const { token, id } = created.json().data;
    expect(token).toMatch(/^inbox_pat_/);
    const list = await ctx.app.inject({ method: 'GET', url: '/v1/personal-access-tokens', headers: bearer(jwt) });
    expect(list.json().data).toContainEqual(expect.objectContaining({ id, name: 'cli', prefix: token.slice(0, 15) }));
    expect(list.body).not.toContain(token);

    const me = await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(token) });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.email).toBe('pat@acme.test');

    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/personal-access-tokens/${id}`, headers: bearer(jwt) })).statusCode).toBe(204);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(token) })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/personal-access-tokens/${id}`, headers: bearer(jwt) })).statusCode).toBe(404);
  });

  it('work only where allowed: not on ordinary /v1 routes, and they cannot mint more tokens', async () => {
    const { token } = (await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(jwt), payload: { name: 'narrow' } })).json().data;
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: bearer(token) })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: bearer(token), payload: { name: 'x' } })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/personal-access-tokens', headers: tenant.headers })).statusCode).toBe(403);
  });
});
