import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

// GET /v1/threads/counts (docs/conversations.md, "Counts per view"): the console's tab numbers,
// under the list's filters and the same rule of who sees what as the list itself.
const ctx = await useTestContext();
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const keyHeaders = { 'x-api-key': (await issueApiKey(db, ws, 'reader', ['read'])).key };
const ada = await signedInUser(ctx.app, ctx.deps, ws, ['agent']);
const bo = await signedInUser(ctx.app, ctx.deps, ws, ['agent']);
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const chat = { ...(await makeConnection(ctx.deps, ws, { integrationKey: 'aggregator' })), workspaceId: ws };

const other = await makeTenant(ctx.deps);
const otherLine = { ...(await makeConnection(ctx.deps, other.workspace.id)), workspaceId: other.workspace.id };
await seedThread(ctx.deps, otherLine, { status: 'open' });

await seedThread(ctx.deps, line, { status: 'open', assigneeId: ada.user.id, labels: ['vip'] });
await seedThread(ctx.deps, chat, { status: 'open', assigneeId: ada.user.id });
await seedThread(ctx.deps, line, { status: 'pending', assigneeId: ada.user.id });
await seedThread(ctx.deps, line, { status: 'open', assigneeId: bo.user.id, labels: ['vip'] });
await seedThread(ctx.deps, chat, { status: 'open', labels: ['vip'] });
await seedThread(ctx.deps, line, { status: 'open' });
await seedThread(ctx.deps, line, { status: 'resolved' });

async function counts(query: string, headers: Record<string, string>) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads/counts?${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { mine: number | null; unassigned: number; all: number };
}

async function listed(query: string, headers: Record<string, string>) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads?limit=100&${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as unknown[]).length;
}

describe('GET /v1/threads/counts', () => {
  it("counts each view under the list's filters, agreeing with the list itself", async () => {
    expect(await counts('status=open', ada.headers)).toEqual({ mine: 2, unassigned: 2, all: 5 });
    expect(await counts('status=open', bo.headers)).toEqual({ mine: 1, unassigned: 2, all: 5 });
    expect(await counts('status=open,pending', ada.headers)).toEqual({ mine: 3, unassigned: 2, all: 6 });
    expect(await counts('status=open&label=vip', ada.headers)).toEqual({ mine: 1, unassigned: 1, all: 3 });
    expect(await counts(`status=open&connectionId=${chat.id}`, ada.headers)).toEqual({ mine: 1, unassigned: 1, all: 2 });
    expect(await counts('', ada.headers)).toEqual({ mine: 3, unassigned: 3, all: 7 });
    for (const query of ['status=open', 'status=open&label=vip', `status=pending&connectionId=${line.id}`]) {
      const c = await counts(query, ada.headers);
      expect(c.all).toBe(await listed(query, ada.headers));
      expect(c.mine).toBe(await listed(`${query}&assigneeId=me`, ada.headers));
      expect(c.unassigned).toBe(await listed(`${query}&assigneeId=none`, ada.headers));
    }
  });

  it('counts under priority, slaStatus and sort=sla as the list narrows by them', async () => {
    const urgent = await seedThread(ctx.deps, line, { status: 'open', assigneeId: ada.user.id });
    const due = await seedThread(ctx.deps, chat, { status: 'open' });
    await db.updateTable('threads').set({ priority: 'urgent' }).where('id', '=', urgent.id).execute();
    await db
      .updateTable('threads')
      .set({ sla_status: 'warning', sla_due_at: new Date(Date.now() + 3_600_000) })
      .where('id', '=', due.id)
      .execute();
    try {
      expect(await counts('status=open&priority=urgent', ada.headers)).toEqual({ mine: 1, unassigned: 0, all: 1 });
      expect(await counts('status=open&slaStatus=warning', ada.headers)).toEqual({ mine: 0, unassigned: 1, all: 1 });
      expect(await counts('sort=sla', ada.headers)).toEqual({ mine: 0, unassigned: 1, all: 1 });
      for (const query of ['priority=urgent,high', 'slaStatus=warning', 'sort=sla', 'status=open&priority=normal']) {
        const c = await counts(query, ada.headers);
        expect(c.all, query).toBe(await listed(query, ada.headers));
        expect(c.mine, query).toBe(await listed(`${query}&assigneeId=me`, ada.headers));
        expect(c.unassigned, query).toBe(await listed(`${query}&assigneeId=none`, ada.headers));
      }
    } finally {
      await db.deleteFrom('threads').where('id', 'in', [urgent.id, due.id]).execute();
    }
  });

  it('answers mine: null to an API key, which is nobody', async () => {
    expect(await counts('status=open', keyHeaders)).toEqual({ mine: null, unassigned: 2, all: 5 });
  });

  it('leaves out the threads another team keeps from a restricted agent', async () => {
    const team = await ctx.app.inject({ method: 'POST', url: '/v1/teams', headers: tenant.headers, payload: { name: 'Billing' } });
    expect(team.statusCode, team.body).toBe(201);
    const secret = await seedThread(ctx.deps, line, { status: 'open' });
    await db.updateTable('threads').set({ team_id: team.json().data.id }).where('id', '=', secret.id).execute();
    const before = await counts('status=open', ada.headers);
    expect(before).toEqual({ mine: 2, unassigned: 3, all: 6 });

    const on = await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/workspace',
      headers: tenant.headers,
      payload: { restrictAgentsToTeams: true },
    });
    expect(on.statusCode, on.body).toBe(200);
    try {
      expect(await counts('status=open', ada.headers)).toEqual({ mine: 2, unassigned: 2, all: 5 });
      expect((await counts('status=open', ada.headers)).all).toBe(await listed('status=open', ada.headers));
      // An API key sees every thread whatever the setting.
      expect((await counts('status=open', tenant.headers)).all).toBe(6);
    } finally {
      await ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: tenant.headers, payload: { restrictAgentsToTeams: false } });
      await db.deleteFrom('threads').where('id', '=', secret.id).execute();
    }
  });

  it('refuses bad filters and an assignee with 422 and the error envelope, and a caller without a credential with 401', async () => {
    for (const query of ['status=closed', 'label=Not%20a%20label', 'connectionId=abc', 'assigneeId=me']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads/counts?${query}`, headers: ada.headers });
      expect(res.statusCode, query).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const anonymous = await ctx.app.inject({ method: 'GET', url: '/v1/threads/counts' });
    expect(anonymous.statusCode).toBe(401);
  });
});
