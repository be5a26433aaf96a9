import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
let total = 0;

beforeAll(async () => {
  for (let i = 0; i < 12; i++) await createWorkspace(ctx.deps.db, `Tenant ${i}`);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`.execute(ctx.deps.db);
  total = rows[0]!.n;
});

const get = (url: string, headers = adminHeaders()) => ctx.app.inject({ method: 'GET', url, headers });

describe('GET /v1/operator/tenants (offset pages)', () => {
  it('pages with page, limit, total and hasMore', async () => {
    const first = (await get('/v1/operator/tenants?limit=5')).json();
    expect(first.meta).toEqual({ requestId: expect.any(String), page: 1, limit: 5, total, hasMore: true });
    expect(first.data).toHaveLength(5);
    expect(first.data[0]).toEqual({
      id: expect.any(Number),
      name: expect.any(String),
      appId: expect.stringMatching(/^app_/),
      createdAt: expect.any(String),
    });
    const lastPage = Math.ceil(total / 5);
    const last = (await get(`/v1/operator/tenants?limit=5&page=${lastPage}`)).json();
    expect(last.meta.hasMore).toBe(false);
    expect(last.data).toHaveLength(total - (lastPage - 1) * 5);
    const beyond = (await get(`/v1/operator/tenants?limit=5&page=${lastPage + 1}`)).json();
    expect(beyond.data).toEqual([]);
    expect(beyond.meta).toMatchObject({ total, hasMore: false });
  });

  it('defaults limit to 50, clamps it into [1, 1000] on the tenants list', async () => {
    expect((await get('/v1/operator/tenants')).json().meta.limit).toBe(50);
    expect((await get('/v1/operator/tenants?limit=0')).json().meta.limit).toBe(1);
    expect((await get('/v1/operator/tenants?limit=999')).json().meta.limit).toBe(999);
    expect((await get('/v1/operator/tenants?limit=5000')).json().meta.limit).toBe(1000);
  });

  it('refuses tenant credentials: an API key is not an operator', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const res = await get('/v1/operator/tenants', headers);
    expect(res.statusCode).toBe(403);
    const none = await get('/v1/operator/tenants', {});
    expect(none.statusCode).toBe(401);
  });
});

describe('GET /v1/operator/connections', () => {
  it('clamps limit to 200 and counts the same filtered set as the rows', async () => {
    const tenant = await makeTenant(ctx.deps);
    for (let i = 0; i < 3; i++) await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'email' });
    const res = (await get(`/v1/operator/connections?workspaceId=${tenant.workspace.id}&integrationKey=sms&limit=2`)).json();
    expect(res.meta).toMatchObject({ page: 1, limit: 2, total: 3, hasMore: true });
    expect(
      res.data.every(
        (c: { integrationKey: string; workspaceId: number }) => c.integrationKey === 'sms' && c.workspaceId === tenant.workspace.id,
      ),
    ).toBe(true);
    expect((await get('/v1/operator/connections?limit=1000')).json().meta.limit).toBe(200);
  });
});

describe('operator credentials', () => {
  it('a JWT of a user with role operator is accepted; that user’s personal-access token is refused (401)', async () => {
    const staff = await makeTenant(ctx.deps);
    const { password } = await makeUser(ctx.deps, staff.workspace.id, { email: 'staff-operator@acme.test', roles: ['operator'] });
    const jwt = (
      await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: 'staff-operator@acme.test', password } })
    ).json().access_token as string;
    expect((await get('/v1/operator/tenants', { authorization: `Bearer ${jwt}` })).statusCode).toBe(200);
    const pat = (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/personal-access-tokens',
        headers: { authorization: `Bearer ${jwt}` },
        payload: { name: 'script' },
      })
    ).json().data.token as string;
    for (const url of ['/v1/operator/tenants', '/v1/operator/connections', '/v1/operator/webhook-inbox']) {
      const res = await get(url, { authorization: `Bearer ${pat}` });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
    // The same token still works where personal-access tokens are meant to.
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: `Bearer ${pat}` } })).statusCode).toBe(
      200,
    );
  });
});
