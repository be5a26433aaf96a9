import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { applyDeliveries, type DeliveryEvents } from '../../src/messaging/apply-events.js';
import { autoAssignedLine } from '../../src/threads/activity.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, signedInUser, transcriptLines } from './workflow-helpers.js';

const ctx = await useTestContext();

/** A connection made through the engage route, with `autoAssign` as given. */
async function engageConnection(workspaceId: number, autoAssign?: boolean) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/engage/workspaces/${workspaceId}/connections`,
    headers: adminHeaders(),
    payload: {
      integrationKey: 'aggregator',
      externalAccountId: `agg-${Math.random().toString(36).slice(2)}`,
      name: 'Support line',
      ...(autoAssign === undefined ? {} : { autoAssign }),
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; integrationKey: string; externalAccountId: string; autoAssign: boolean };
}

const assigneeOf = async (threadId: number) =>
  (await ctx.deps.db.selectFrom('threads').select('assignee_id').where('id', '=', threadId).executeTakeFirstOrThrow()).assignee_id;
const delivery = (c: { integrationKey: string; externalAccountId: string }, from: string, id: string): DeliveryEvents => ({
  deliveryId: id,
  integrationKey: c.integrationKey,
  events: [{ type: 'message', externalAccountId: c.externalAccountId, externalMessageId: id, contact: { externalId: from }, text: 'hi' }],
});
const threadOf = async (externalId: string) =>
  (await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', externalId).executeTakeFirstOrThrow()).thread_id;

describe('the autoAssign setting', () => {
  it('is set in the engage create body and by PATCH /v1/connections/:id, and shown on the Connection', async () => {
    const tenant = await makeTenant(ctx.deps);
    expect((await engageConnection(tenant.workspace.id)).autoAssign).toBe(false);
    const c = await engageConnection(tenant.workspace.id, true);
    expect(c.autoAssign).toBe(true);
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${c.id}`,
      headers: tenant.headers,
      payload: { autoAssign: false },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.autoAssign).toBe(false);
    const list = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers })).json().data as {
      id: number;
      autoAssign: boolean;
    }[];
    expect(list.find((x) => x.id === c.id)!.autoAssign).toBe(false);
    expect(
      (await ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${c.id}`, headers: tenant.headers, payload: { autoAssign: 'yes' } }))
        .statusCode,
    ).toBe(422);
  });
});

describe('automatic assignment', () => {
  it('gives a new thread to the agent with the fewest open assigned threads, ties to the one given a thread least recently; never an operator', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['admin'] });
    const { user: bo } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Bo', roles: ['agent'] });
    const { user: dee } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Dee', roles: [] });
    await makeUser(ctx.deps, tenant.workspace.id, { name: 'Op', roles: ['operator'] });
    await makeUser(ctx.deps, tenant.workspace.id, { name: 'Staff admin', roles: ['admin', 'operator'] });
    await makeUser(ctx.deps, tenant.workspace.id, { name: 'Fin', roles: ['billing'] });
    const manual = await makeConnection(ctx.deps, tenant.workspace.id);
    const auto = await engageConnection(tenant.workspace.id, true);

    // Ada already works one open thread, and Bo one resolved thread (which does not count).
    const adas = await inbound(ctx, manual, 'm-1', 'm-1');
    expect(await assigneeOf(adas)).toBeNull(); // no autoAssign on this connection
    await ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${adas}`, headers: ada.headers, payload: { assigneeId: ada.user.id } });
    const bos = await inbound(ctx, manual, 'm-2', 'm-2');
    await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/threads/${bos}`,
      headers: ada.headers,
      payload: { assigneeId: bo.id, status: 'resolved' },
    });

    // Bo and Dee have no open thread; Bo was given one (by hand) and Dee never: Dee.
    const t1 = await inbound(ctx, auto, 'a-1', 'a-1');
    expect(await assigneeOf(t1)).toBe(dee.id);
    const t2 = await inbound(ctx, auto, 'a-2', 'a-2');
    expect(await assigneeOf(t2)).toBe(bo.id);
    const t3 = await inbound(ctx, auto, 'a-3', 'a-3');
    expect(await assigneeOf(t3)).toBe(ada.user.id); // 1, 1, 1: Ada was given one longest ago
    expect((await transcriptLines(ctx, t1)).map((l) => [l.text, l.author_id])).toEqual([[autoAssignedLine('Dee'), null]]);
    const thread = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${t1}`, headers: tenant.headers })).json().data;
    expect(thread.assigneeId).toBe(dee.id);
    // A second message on an open, assigned thread changes nothing.
    await inbound(ctx, auto, 'a-1', 'a-1b');
    expect(await transcriptLines(ctx, t1)).toHaveLength(1);

    // One batch of three new threads spreads them as it goes: 2, 2, 2 → Dee, Bo, Ada (least recently given one first).
    const now = new Date();
    await ctx.deps.db.transaction().execute((trx) =>
      applyDeliveries(
        ctx.deps,
        trx,
        ['b-1', 'b-2', 'b-3'].map((id) => delivery(auto, id, id)),
        now,
      ),
    );
    const batch = await Promise.all(['b-1', 'b-2', 'b-3'].map(async (id) => assigneeOf(await threadOf(id))));
    expect(batch.sort()).toEqual([ada.user.id, bo.id, dee.id].sort());
  });

  it('assigns a reopened thread that has no assignee, and keeps the one a reopened thread has', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
    const auto = await engageConnection(tenant.workspace.id, true);
    const t = await inbound(ctx, auto, 'r-1', 'r-1');
    expect(await assigneeOf(t)).toBe(ada.user.id);
    await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/threads/${t}`,
      headers: ada.headers,
      payload: { assigneeId: null, status: 'resolved' },
    });
    await inbound(ctx, auto, 'r-1', 'r-2');
    expect(await assigneeOf(t)).toBe(ada.user.id);
    expect((await transcriptLines(ctx, t)).map((l) => l.text).slice(-2)).toEqual([
      'A new message from the contact reopened the conversation',
      autoAssignedLine('Ada'),
    ]);
    // Resolved with its assignee: reopened, still Ada's, and no assignment line.
    await ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${t}`, headers: ada.headers, payload: { status: 'resolved' } });
    const lines = (await transcriptLines(ctx, t)).length;
    await inbound(ctx, auto, 'r-1', 'r-3');
    expect(await assigneeOf(t)).toBe(ada.user.id);
    expect(await transcriptLines(ctx, t)).toHaveLength(lines + 1);
  });

  it('assigns a live chat conversation when the visitor opens it, before any message', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { user: agent } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${widget.connection.id}`,
      headers: tenant.headers,
      payload: { autoAssign: true },
    });
    const visitor = await startVisitor(ctx.app, widget.key, { name: 'Lin' });
    expect(await assigneeOf(visitor.threadId)).toBe(agent.id);
  });

  it('routes a thread the business starts (POST /v1/conversations) as a new one, in the same commit', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { user: agent } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Cy', roles: ['agent'] });
    const auto = await engageConnection(tenant.workspace.id, true);
    const start = (to: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: tenant.headers,
        payload: { connectionId: auto.id, to, text: 'Your order has shipped' },
      });
    const res = await start('+14155550123');
    expect(res.statusCode, res.body).toBe(202);
    const { thread } = res.json().data as { thread: { id: number; assigneeId: number | null } };
    expect(thread.assigneeId).toBe(agent.id);
    expect(await assigneeOf(thread.id)).toBe(agent.id);
    expect((await transcriptLines(ctx, thread.id)).map((l) => l.text)).toEqual([autoAssignedLine('Cy')]);
    // Not on a connection without autoAssign.
    const manual = await engageConnection(tenant.workspace.id, false);
    const plain = await ctx.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: tenant.headers,
      payload: { connectionId: manual.id, to: '+14155550124', text: 'Hello' },
    });
    expect(plain.json().data.thread.assigneeId).toBeNull();
  });

  it('leaves a thread unassigned in a workspace with no agent', async () => {
    const tenant = await makeTenant(ctx.deps);
    await makeUser(ctx.deps, tenant.workspace.id, { roles: ['operator'] });
    const auto = await engageConnection(tenant.workspace.id, true);
    expect(await assigneeOf(await inbound(ctx, auto, 'n-1', 'n-1'))).toBeNull();
  });

  it('two transactions racing on one workspace never pick by the same count: the second waits for the first', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { user: a } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const { user: b } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const auto = await engageConnection(tenant.workspace.id, true);

    let applied!: () => void;
    const firstApplied = new Promise<void>((resolve) => (applied = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The first batch assigns its thread and holds its transaction open.
    const first = ctx.deps.db.transaction().execute(async (trx) => {
      await applyDeliveries(ctx.deps, trx, [delivery(auto, 'race-1', 'race-1')], new Date());
      applied();
      await gate;
    });
    await firstApplied;
    let secondDone = false;
    const second = ctx.deps.db
      .transaction()
      .execute((trx) => applyDeliveries(ctx.deps, trx, [delivery(auto, 'race-2', 'race-2')], new Date()))
      .finally(() => (secondDone = true));
    // Observed, not slept: the second batch either waits on the workspace's assignment lock or
    // (were there none) finishes having counted without the first's uncommitted assignment.
    await waitFor(async () => {
      if (secondDone) return true;
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`.execute(
        ctx.deps.db,
      );
      return rows[0]!.n > 0;
    }, 'the second batch to wait or finish');
    release();
    await Promise.all([first, second]);
    const assignees = [await assigneeOf(await threadOf('race-1')), await assigneeOf(await threadOf('race-2'))];
    expect(assignees).toEqual([a.id, b.id]);
  });
});
