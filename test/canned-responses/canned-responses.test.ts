import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

async function agentHeaders(workspaceId: number) {
  const { user, password } = await makeUser(ctx.deps, workspaceId, { roles: ['agent'] });
  const token = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
    .access_token;
  return { authorization: `Bearer ${token}` };
}

describe('/v1/canned-responses', () => {
  it('lets any user create, list, change and delete them', async () => {
    const tenant = await makeTenant(ctx.deps);
    const agent = await agentHeaders(tenant.workspace.id);
    const created = await call('POST', '/v1/canned-responses', agent, { shortCode: 'thanks_1', content: 'Thank you for writing!' });
    expect(created.statusCode).toBe(201);
    const item = created.json().data;
    expect(item).toEqual({
      id: expect.any(Number),
      shortCode: 'thanks_1',
      content: 'Thank you for writing!',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await call('GET', '/v1/canned-responses', agent)).json().data).toEqual([item]);

    const changed = await call('PATCH', `/v1/canned-responses/${item.id}`, agent, { content: 'Thanks!' });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().data).toMatchObject({ id: item.id, shortCode: 'thanks_1', content: 'Thanks!' });
    // keeping one's own short code is not a conflict
    expect((await call('PATCH', `/v1/canned-responses/${item.id}`, agent, { shortCode: 'thanks_1' })).statusCode).toBe(200);

    expect((await call('DELETE', `/v1/canned-responses/${item.id}`, agent)).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/canned-responses/${item.id}`, agent)).statusCode).toBe(404);
    expect((await call('GET', '/v1/canned-responses', agent)).json().data).toEqual([]);
  });

  it('lets a read key list but not write; a write key may write', async () => {
    const readKey = await makeTenant(ctx.deps, { scopes: ['read'] });
    expect((await call('GET', '/v1/canned-responses', readKey.headers)).statusCode).toBe(200);
    const refused = await call('POST', '/v1/canned-responses', readKey.headers, { shortCode: 'hi', content: 'Hi' });
    expect(refused.statusCode).toBe(403);
    const writeKey = await makeTenant(ctx.deps, { scopes: ['write'] });
    expect((await call('POST', '/v1/canned-responses', writeKey.headers, { shortCode: 'hi', content: 'Hi' })).statusCode).toBe(201);
  });

  it('answers 409 for a short code the workspace already has, on create and on change', async () => {
    const tenant = await makeTenant(ctx.deps);
    const other = await makeTenant(ctx.deps);
    await call('POST', '/v1/canned-responses', tenant.headers, { shortCode: 'refund', content: 'About your refund…' });
    const dup = await call('POST', '/v1/canned-responses', tenant.headers, { shortCode: 'refund', content: 'again' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error).toEqual({ code: 'conflict', message: 'a canned response with short code "refund" already exists' });
    // short codes are per workspace
    expect((await call('POST', '/v1/canned-responses', other.headers, { shortCode: 'refund', content: 'x' })).statusCode).toBe(201);
    const second = (
      await call('POST', '/v1/canned-responses', tenant.headers, { shortCode: 'shipping', content: 'Ships in 2 days' })
    ).json().data;
    const clash = await call('PATCH', `/v1/canned-responses/${second.id}`, tenant.headers, { shortCode: 'refund' });
    expect(clash.statusCode).toBe(409);
    const list = (await call('GET', '/v1/canned-responses', tenant.headers)).json().data;
    expect(list.map((c: { shortCode: string }) => c.shortCode).sort()).toEqual(['refund', 'shipping']);
  });

  it('refuses bad short codes and contents with 422, writing nothing', async () => {
    const tenant = await makeTenant(ctx.deps);
    const bad = [
      { shortCode: 'Upper', content: 'x' },
      { shortCode: 'has space', content: 'x' },
      { shortCode: '', content: 'x' },
      { shortCode: 'a'.repeat(41), content: 'x' },
      { shortCode: 'ok', content: '' },
      { shortCode: 'ok', content: 'x'.repeat(4097) },
      { shortCode: 'ok' },
      { shortCode: 'ok', content: 'x', private: true },
    ];
    for (const body of bad) {
      const res = await call('POST', '/v1/canned-responses', tenant.headers, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect(
      (await call('POST', '/v1/canned-responses', tenant.headers, { shortCode: 'a'.repeat(40), content: 'x'.repeat(4096) })).statusCode,
    ).toBe(201);
    expect((await call('GET', '/v1/canned-responses', tenant.headers)).json().data).toHaveLength(1);
  });
});
