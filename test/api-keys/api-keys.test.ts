import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

describe('API keys', () => {
  it('matches the X-API-KEY header whatever its casing', async () => {
    const { apiKey } = await makeTenant(ctx.deps);
    for (const name of ['X-API-KEY', 'x-api-key', 'X-Api-Key']) {
      expect((await call('GET', '/v1/api-keys', { [name]: apiKey })).statusCode, name).toBe(200);
    }
  });

  it('refuses an unknown key with 401 invalid_api_key and no key with 401 unauthorized', async () => {
    const bad = await call('GET', '/v1/api-keys', { 'x-api-key': 'inbox_ak_not-a-real-key' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.code).toBe('invalid_api_key');
    const none = await call('GET', '/v1/api-keys', {});
    expect(none.statusCode).toBe(401);
    expect(none.json().error.code).toBe('unauthorized');
  });

  it('requires the admin scope', async () => {
    const { headers } = await makeTenant(ctx.deps, { scopes: ['read'] });
    const res = await call('GET', '/v1/api-keys', headers);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('forbidden');
  });

  it('creates a key that works at once, shows it once and lists it without the secret', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const created = await call('POST', '/v1/api-keys', headers, { name: 'deploy bot', scopes: ['admin'] });
    expect(created.statusCode).toBe(201);
    const { key, id } = created.json().data;
    expect((await call('GET', '/v1/connections', { 'x-api-key': key })).statusCode).toBe(200);
    const list = (await call('GET', '/v1/api-keys', headers)).json();
    const listed = list.data.find((k: { id: number }) => k.id === id);
    expect(listed).toMatchObject({ id, name: 'deploy bot', scopes: ['admin'], prefix: key.slice(0, 14) });
    expect(JSON.stringify(list)).not.toContain(key);
  });

  it('rotates a key: the new secret works, the old one stops working', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const { key: oldKey, id } = (await call('POST', '/v1/api-keys', headers, { name: 'rotating' })).json().data;
    const rotated = await call('POST', `/v1/api-keys/${id}/rotate`, headers);
    expect(rotated.statusCode).toBe(200);
    const newKey = rotated.json().data.key;
    expect(newKey).not.toBe(oldKey);
    expect((await call('GET', '/v1/connections', { 'x-api-key': oldKey })).statusCode).toBe(401);
    expect((await call('GET', '/v1/connections', { 'x-api-key': newKey })).statusCode).toBe(200);
  });

  it('deletes a key: it stops working and is no longer listed', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const { key, id } = (await call('POST', '/v1/api-keys', headers, { name: 'doomed' })).json().data;
    const del = await call('DELETE', `/v1/api-keys/${id}`, headers);
    expect(del.statusCode).toBe(200);
    expect((await call('GET', '/v1/connections', { 'x-api-key': key })).statusCode).toBe(401);
    const ids = (await call('GET', '/v1/api-keys', headers)).json().data.map((k: { id: number }) => k.id);
    expect(ids).not.toContain(id);
    expect((await call('DELETE', `/v1/api-keys/${id}`, headers)).statusCode).toBe(404);
  });

  it("never touches another workspace's keys", async () => {
    const a = await makeTenant(ctx.deps);
    const b = await makeTenant(ctx.deps);
    const { id } = (await call('POST', '/v1/api-keys', b.headers, { name: 'b key' })).json().data;
    expect((await call('POST', `/v1/api-keys/${id}/rotate`, a.headers)).json().error.code).toBe('not_found');
    expect((await call('DELETE', `/v1/api-keys/${id}`, a.headers)).statusCode).toBe(404);
    const listA = (await call('GET', '/v1/api-keys', a.headers)).json().data.map((k: { id: number }) => k.id);
    expect(listA).not.toContain(id);
  });

  it('rejects unknown scopes and bad ids with 422', async () => {
    const { headers } = await makeTenant(ctx.deps);
    expect((await call('POST', '/v1/api-keys', headers, { name: 'x', scopes: ['root'] })).statusCode).toBe(422);
    expect((await call('POST', '/v1/api-keys/abc/rotate', headers)).statusCode).toBe(422);
  });
});
