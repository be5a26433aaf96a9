import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, adminHeaders, useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();

describe('engage admin routes', () => {
  it('creates a workspace with its app id', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload: { name: 'Acme' } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.data).toMatchObject({ id: expect.any(Number), name: 'Acme', appId: expect.stringMatching(/^app_[0-9a-f]{24}$/) });
    expect(body.meta.requestId).toBe(res.headers['x-request-id']);
  });

  it('accepts the admin key from X-Service-Admin-API-Key, then X-API-KEY, then a bearer token', async () => {
    for (const headers of [
      { 'x-service-admin-api-key': ADMIN_KEY },
      { 'X-API-KEY': ADMIN_KEY },
      { authorization: `Bearer ${ADMIN_KEY}` },
    ]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers, payload: { name: 'W' } });
      expect(res.statusCode, JSON.stringify(headers)).toBe(201);
    }
  });

  it('takes the first present header: a wrong X-Service-Admin-API-Key is not rescued by a right X-API-KEY', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/engage/workspaces',
      headers: { 'x-service-admin-api-key': 'wrong', 'x-api-key': ADMIN_KEY },
      payload: { name: 'W' },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });

  it('refuses a missing or wrong admin key and writes nothing', async () => {
    const before = await countWorkspaces();
    for (const headers of [{}, { 'x-service-admin-api-key': `${ADMIN_KEY}x` }, { 'x-service-admin-api-key': 'short' }]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers, payload: { name: 'W' } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) }, meta: { requestId: expect.any(String) } });
    }
    expect(await countWorkspaces()).toBe(before);
  });

  it('creates a user (argon2id hash, never the password) and answers with UserResource', async () => {
    const ws = (
      await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload: { name: 'U' } })
    ).json().data;
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/users`,
      headers: adminHeaders(),
      payload: { name: 'Ada', email: 'ada@example.test', password: 'correct horse', roles: ['admin'] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({
      id: expect.any(Number),
      name: 'Ada',
      email: 'ada@example.test',
      workspaces_id: ws.id,
      roles: ['admin'],
    });
    const row = await ctx.deps.db.selectFrom('users').selectAll().where('email', '=', 'ada@example.test').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);

    const dup = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/users`,
      headers: adminHeaders(),
      payload: { name: 'Ada 2', email: 'ADA@example.test', password: 'correct horse' },
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('conflict');
  });

  it('issues an API key shown once and stored only as a hash', async () => {
    const ws = (
      await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload: { name: 'K' } })
    ).json().data;
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/api-keys`,
      headers: adminHeaders(),
      payload: { name: 'ci', scopes: ['admin'] },
    });
    expect(res.statusCode).toBe(201);
    const key = res.json().data;
    expect(key).toMatchObject({ id: expect.any(Number), name: 'ci', scopes: ['admin'], key: expect.stringMatching(/^inbox_ak_/) });
    const row = await ctx.deps.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.key_hash).not.toContain(key.key);
    expect(JSON.stringify(row)).not.toContain(key.key);
  });

  it('connects a channel account; the same account twice is a conflict', async () => {
    const ws = (
      await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload: { name: 'C' } })
    ).json().data;
    const payload = { integrationKey: 'whatsapp', externalAccountId: '1029384756', name: 'Support line' };
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/connections`,
      headers: adminHeaders(),
      payload,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ id: expect.any(Number), ...payload, createdAt: expect.any(String) });
    const again = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/connections`,
      headers: adminHeaders(),
      payload,
    });
    expect(again.statusCode).toBe(409);
  });

  it('refuses a whatsapp_session connection when no webhook signing secret is configured', async () => {
    const ws = (
      await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload: { name: 'S' } })
    ).json().data;
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws.id}/connections`,
      headers: adminHeaders(),
      payload: { integrationKey: 'whatsapp_session', externalAccountId: 'session-1', name: 'Gateway' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toMatch(/16 to 255/);
  });

  it('answers unknown workspaces with not_found and bad bodies with validation_failed', async () => {
    const missing = await ctx.app.inject({
      method: 'POST',
      url: '/v1/engage/workspaces/999999/users',
      headers: adminHeaders(),
      payload: { name: 'X', email: 'x@example.test', password: 'long enough' },
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('not_found');

    for (const payload of [{}, { name: '' }, { name: 42 }]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/engage/workspaces', headers: adminHeaders(), payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
  });
});

async function countWorkspaces(): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM workspaces`.execute(ctx.deps.db);
  return rows[0]!.n;
}
