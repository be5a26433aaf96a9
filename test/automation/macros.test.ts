import { describe, expect, it } from 'vitest';
import { fillVariables } from '../../src/canned-responses/variables.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

const ctx = await useTestContext();
const db = ctx.deps.db;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

let seq = 0;
async function setup() {
  const tenant = await makeTenant(ctx.deps, { name: 'Acme' });
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4940${++seq}` });
  const ada = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
  await db.updateTable('users').set({ name: 'Ada' }).where('id', '=', ada.user.id).execute();
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  await db
    .updateTable('contacts')
    .set({ name: 'Grace', attributes: JSON.stringify({ plan: 'gold' }) })
    .where('id', '=', thread.contact_id)
    .execute();
  return { tenant, ada, thread };
}

describe('canned-response variables', () => {
  it('fill the known ones, leave unknown ones as typed, and never read a value as a variable', () => {
    const values = {
      contact: { name: '{{agent.name}}', email: null, attributes: { plan: 'gold', constructor: 1 } },
      agent: { name: 'Ada' },
      workspace: { name: 'Acme' },
    };
    expect(
      fillVariables(
        'Hi {{contact.name}} ({{ contact.email }}), {{agent.name}} of {{workspace.name}}: {{contact.attributes.plan}} {{contact.attributes.x}} {{contact.attributes.constructor}} {{nope}} {{unclosed',
        values,
      ),
    ).toBe('Hi {{agent.name}} (), Ada of Acme: gold  1 {{nope}} {{unclosed');
    // A stray `{{` (or a third brace) before a variable leaves the variable filled in.
    expect(fillVariables('Use {{ braces, {{contact.attributes.plan}} and {{{agent.name}}}', values)).toBe('Use {{ braces, gold and {Ada}');
  });
});

describe('macros', () => {
  it('are kept by agents; an unshared one is seen by its author only', async () => {
    const { tenant, ada } = await setup();
    const bo = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
    const mine = await call('POST', '/v1/macros', ada.headers, {
      name: 'Mine',
      shared: false,
      actions: [{ type: 'set_priority', priority: 'high' }],
    });
    expect(mine.statusCode, mine.body).toBe(201);
    expect(mine.json().data).toMatchObject({ name: 'Mine', shared: false, authorId: ada.user.id });
    const ours = await call('POST', '/v1/macros', ada.headers, { name: 'Ours', actions: [{ type: 'add_labels', labels: ['x'] }] });
    expect(ours.json().data.shared).toBe(true);
    const names = async (headers: Record<string, string>) =>
      (await call('GET', '/v1/macros', headers)).json().data.map((m: { name: string }) => m.name);
    // A tenant list (SPEC §8.1): newest first, in cursor pages.
    expect(await names(ada.headers)).toEqual(['Ours', 'Mine']);
    expect(await names(bo.headers)).toEqual(['Ours']);
    expect(await names(tenant.headers)).toEqual(['Ours']);
    const first = (await call('GET', '/v1/macros?limit=1', ada.headers)).json();
    expect(first.data.map((m: { name: string }) => m.name)).toEqual(['Ours']);
    expect(first.meta.nextCursor).toEqual(expect.any(String));
    const rest = (await call('GET', `/v1/macros?limit=1&cursor=${first.meta.nextCursor}`, ada.headers)).json();
    expect(rest.data.map((m: { name: string }) => m.name)).toEqual(['Mine']);
    expect(rest.meta.nextCursor).toBeUndefined();
    // Another agent neither changes a colleague's macro nor sees an unshared one.
    expect((await call('PATCH', `/v1/macros/${ours.json().data.id}`, bo.headers, { name: 'Theirs' })).statusCode).toBe(403);
    expect((await call('PATCH', `/v1/macros/${mine.json().data.id}`, bo.headers, { name: 'Theirs' })).statusCode).toBe(404);
    // An admin does; the author deletes.
    expect((await call('PATCH', `/v1/macros/${ours.json().data.id}`, tenant.headers, { name: 'Everyone' })).json().data.name).toBe(
      'Everyone',
    );
    expect((await call('DELETE', `/v1/macros/${mine.json().data.id}`, ada.headers)).statusCode).toBe(200);
    const bad = await call('POST', '/v1/macros', ada.headers, { name: 'Bad', actions: [{ type: 'assign_team', teamId: 999999 }] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.message).toMatch(/actions\[0\]\.teamId/);
  });

  it('run their actions in order as the caller, fill the reply’s variables, and fire thread.updated rules', async () => {
    const { tenant, ada, thread } = await setup();
    const rule = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Pending watcher',
      event: 'thread.updated',
      conditions: [{ field: 'status', op: 'eq', value: 'pending' }],
      actions: [{ type: 'add_labels', labels: ['watched'] }],
    });
    expect(rule.statusCode).toBe(201);
    const macro = await call('POST', '/v1/macros', ada.headers, {
      name: 'Ask for details',
      actions: [
        { type: 'reply', text: 'Hi {{contact.name}}, {{agent.name}} of {{workspace.name}} here: which {{contact.attributes.plan}} order?' },
        { type: 'add_labels', labels: ['asked'] },
        { type: 'set_status', status: 'pending' },
      ],
    });
    const res = await call('POST', `/v1/threads/${thread.id}/macros/${macro.json().data.id}/run`, ada.headers);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id: thread.id, status: 'pending', labels: ['asked', 'watched'] });
    const rows = await db
      .selectFrom('messages')
      .select(['kind', 'text', 'author_id', 'status'])
      .where('thread_id', '=', thread.id)
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { kind: 'message', text: 'Hi Grace, Ada of Acme here: which gold order?', author_id: ada.user.id, status: 'queued' },
      // The workspace's assignOnReply: whoever answers an unassigned thread takes it, as with any reply.
      { kind: 'activity', text: 'Ada assigned the conversation to Ada', author_id: ada.user.id, status: 'sent' },
      { kind: 'activity', text: 'Ada added the label asked', author_id: ada.user.id, status: 'sent' },
      { kind: 'activity', text: 'Ada marked the conversation as pending', author_id: ada.user.id, status: 'sent' },
      { kind: 'activity', text: 'Automation “Pending watcher” added the label watched', author_id: null, status: 'sent' },
    ]);
  });

  it('write nothing when an action fails: the run is one transaction', async () => {
    const { tenant, ada, thread } = await setup();
    const { user: bo } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Bo' });
    const macro = await call('POST', '/v1/macros', ada.headers, {
      name: 'To Bo',
      actions: [
        { type: 'add_labels', labels: ['bo'] },
        { type: 'assign_user', userId: bo.id },
      ],
    });
    await db.updateTable('users').set({ active: false }).where('id', '=', bo.id).execute();
    const res = await call('POST', `/v1/threads/${thread.id}/macros/${macro.json().data.id}/run`, ada.headers);
    expect(res.statusCode).toBe(422);
    const after = await db.selectFrom('threads').select(['labels', 'assignee_id']).where('id', '=', thread.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ labels: [], assignee_id: null });
    expect((await call('POST', `/v1/threads/${thread.id}/macros/999999/run`, ada.headers)).statusCode).toBe(404);
    const other = await makeTenant(ctx.deps);
    expect((await call('POST', `/v1/threads/${thread.id}/macros/${macro.json().data.id}/run`, other.headers)).statusCode).toBe(404);
  });
});
