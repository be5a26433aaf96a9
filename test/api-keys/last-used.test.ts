import { describe, expect, it } from 'vitest';
import { LAST_USED_PRECISION_MS } from '../../src/auth/auth.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// A clock the test moves (from now: tokens are signed and checked against it). One pool connection: a use is recorded without holding up the
// request, on the pool, so a read made after the request is answered queues behind it.
let nowMs = Date.now();
const ctx = await useTestContext({ now: () => new Date(nowMs), databaseOptions: { max: 1 } });
const tenant = await makeTenant(ctx.deps);

const get = (url: string, headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url, headers });

describe('lastUsedAt of API keys and personal-access tokens', () => {
  it('records an API key use to the minute: a use within a minute of the last one recorded writes nothing', async () => {
    const created = (
      await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers: tenant.headers, payload: { name: 'probe', scopes: ['read'] } })
    ).json().data;
    const lastUsedAt = async () =>
      (await get('/v1/api-keys', tenant.headers)).json().data.find((k: { id: number }) => k.id === created.id).lastUsedAt;
    expect(await lastUsedAt()).toBeNull();

    const first = nowMs;
    expect((await get('/v1/connections', { 'x-api-key': created.key })).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(first).toISOString());

    nowMs = first + LAST_USED_PRECISION_MS - 1_000;
    expect((await get('/v1/connections', { 'x-api-key': created.key })).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(first).toISOString());

    nowMs = first + LAST_USED_PRECISION_MS + 1_000;
    expect((await get('/v1/connections', { 'x-api-key': created.key })).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(nowMs).toISOString());
  });

  it('records a personal-access token use the same way', async () => {
    const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'last-used@acme.test', roles: ['admin'] });
    const login = await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: 'last-used@acme.test', password } });
    const jwt = { authorization: `Bearer ${login.json().access_token}` };
    const created = (
      await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers: jwt, payload: { name: 'cli' } })
    ).json().data;
    const lastUsedAt = async () =>
      (await get('/v1/personal-access-tokens', jwt)).json().data.find((t: { id: number }) => t.id === created.id).lastUsedAt;
    const pat = { authorization: `Bearer ${created.token}` };
    expect(await lastUsedAt()).toBeNull();

    const first = nowMs;
    expect((await get('/api/user/user', pat)).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(first).toISOString());

    nowMs = first + LAST_USED_PRECISION_MS - 1_000;
    expect((await get('/api/user/user', pat)).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(first).toISOString());

    nowMs = first + LAST_USED_PRECISION_MS + 1_000;
    expect((await get('/api/user/user', pat)).statusCode).toBe(200);
    expect(await lastUsedAt()).toBe(new Date(nowMs).toISOString());
  });
});
