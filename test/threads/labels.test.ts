import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const other = await makeTenant(ctx.deps);
const otherLine = { ...(await makeConnection(ctx.deps, other.workspace.id)), workspaceId: other.workspace.id };

async function labels(headers: Record<string, string>) {
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/labels', headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().meta.requestId).toEqual(expect.any(String));
  return res.json().data;
}

describe('GET /v1/labels', () => {
  it('is empty while no thread carries a label', async () => {
    await seedThread(ctx.deps, line);
    expect(await labels(tenant.headers)).toEqual([]);
  });

  it('lists every label on the workspace’s threads by name, with its open threads', async () => {
    await seedThread(ctx.deps, line, { status: 'open', labels: ['vip', 'billing'] });
    await seedThread(ctx.deps, line, { status: 'open', labels: ['vip'] });
    await seedThread(ctx.deps, line, { status: 'pending', labels: ['vip', 'returns:eu'] });
    await seedThread(ctx.deps, line, { status: 'resolved', labels: ['old-topic'] });
    await seedThread(ctx.deps, line, { status: 'snoozed', labels: ['billing'] });
    await seedThread(ctx.deps, otherLine, { status: 'open', labels: ['vip', 'secret-label'] });
    const expected = [
      { name: 'billing', openThreads: 1 },
      { name: 'old-topic', openThreads: 0 },
      { name: 'returns:eu', openThreads: 0 },
      { name: 'vip', openThreads: 2 },
    ];
    expect(await labels(tenant.headers)).toEqual(expected);
    const reader = { 'x-api-key': (await issueApiKey(ctx.deps.db, ws, 'reader', ['read'])).key };
    expect(await labels(reader)).toEqual(expected);
    expect(await labels((await signedInUser(ctx.app, ctx.deps, ws)).headers)).toEqual(expected);
    expect(await labels(other.headers)).toEqual([
      { name: 'secret-label', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
  });

  it('needs a credential', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/labels' })).statusCode).toBe(401);
  });
});
