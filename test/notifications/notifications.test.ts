import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { describe, expect, it } from 'vitest';
import { applyDeliveries, type DeliveryEvents } from '../../src/messaging/apply-events.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { openSocket } from '../helpers/livechat.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

/**
 * Mentions and notifications (docs/teams.md): who is told what, in the commit of the change
 * that caused it; the caller's own list; `notification.created` on that user's sockets only.
 */
const ctx = await useTestContext();
const wsBase = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');

async function setup() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
    integrationKey: 'sms',
    externalAccountId: `+1555${Math.floor(Math.random() * 1e7)}`,
  });
  const ada = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
  const bo = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  return { tenant, connection, ada, bo, thread };
}
type Headers = Record<string, string>;
const post = (url: string, headers: Headers, payload?: object) =>
  ctx.app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });
const patch = (threadId: number, headers: Headers, payload: object) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${threadId}`, headers, payload });
const list = async (headers: Headers, query = '') => {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/notifications${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Record<string, unknown>[]; meta: { nextCursor?: string } };
};
const rowsOf = (userId: number) =>
  ctx.deps.db.selectFrom('notifications').selectAll().where('user_id', '=', userId).orderBy('id').execute();
const tokenOf = (headers: Headers) => headers.authorization!.replace('Bearer ', '');
const delivery = (c: { integrationKey: string; externalAccountId: string }, from: string, ids: string[]): DeliveryEvents => ({
  deliveryId: ids.join('+'),
  integrationKey: c.integrationKey,
  events: ids.map((id) => ({
    type: 'message' as const,
    externalAccountId: c.externalAccountId,
    externalMessageId: id,
    contact: { externalId: from },
    text: `hi ${id}`,
  })),
});
const apply = (d: DeliveryEvents) => ctx.deps.db.transaction().execute((trx) => applyDeliveries(ctx.deps, trx, [d], new Date()));

describe('attribution', () => {
  it("puts the writer's id on replies and notes, and null where an API key wrote", async () => {
    const { tenant, ada, thread } = await setup();
    const url = `/v1/threads/${thread.id}/messages`;
    expect((await post(url, ada.headers, { text: 'On it' })).json().data.authorId).toBe(ada.user.id);
    expect((await post(url, ada.headers, { text: 'VIP', private: true })).json().data.authorId).toBe(ada.user.id);
    expect((await post(url, tenant.headers, { text: 'Automated' })).json().data.authorId).toBeNull();
    expect((await post(url, tenant.headers, { text: 'Automated note', private: true })).json().data.authorId).toBeNull();
  });
});

describe('POST /v1/threads/:id/messages {text, private: true, mentions}', () => {
  it('stores the mentions on the note and tells each named user but the author', async () => {
    const { ada, bo, thread } = await setup();
    const res = await post(`/v1/threads/${thread.id}/messages`, ada.headers, {
      text: '@Bo can you take this?',
      private: true,
      mentions: [bo.user.id, ada.user.id, bo.user.id],
    });
    expect(res.statusCode, res.body).toBe(201);
    const note = res.json().data;
    expect(note).toMatchObject({ kind: 'note', authorId: ada.user.id, mentions: [bo.user.id, ada.user.id] });
    const [notification] = (await list(bo.headers)).data;
    expect(notification).toEqual({
      id: expect.any(Number),
      type: 'mentioned',
      threadId: thread.id,
      messageId: note.id,
      actorId: ada.user.id,
      createdAt: expect.any(String),
      readAt: null,
    });
    expect(await rowsOf(ada.user.id)).toEqual([]);
    // The transcript shows the same note with its mentions; a note without any shows [].
    const transcript = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${thread.id}/messages`, headers: ada.headers })).json()
      .data;
    expect(transcript.find((m: { id: number }) => m.id === note.id).mentions).toEqual([bo.user.id, ada.user.id]);
    const plain = (await post(`/v1/threads/${thread.id}/messages`, ada.headers, { text: 'just us', private: true })).json().data;
    expect(plain.mentions).toEqual([]);
  });

  it('refuses a user of another workspace, and mentions on a reply, with 422 and nothing written', async () => {
    const { ada, bo, thread } = await setup();
    const stranger = await setup();
    const before = await ctx.deps.db.selectFrom('messages').select('id').where('thread_id', '=', thread.id).execute();
    const foreign = await post(`/v1/threads/${thread.id}/messages`, ada.headers, {
      text: 'psst',
      private: true,
      mentions: [bo.user.id, stranger.ada.user.id],
    });
    expect(foreign.statusCode, foreign.body).toBe(422);
    expect(foreign.json().error.code).toBe('validation_failed');
    expect(foreign.json().error.message).toContain(String(stranger.ada.user.id));
    const reply = await post(`/v1/threads/${thread.id}/messages`, ada.headers, { text: 'Hello', mentions: [bo.user.id] });
    expect(reply.statusCode, reply.body).toBe(422);
    expect(reply.json().error.code).toBe('validation_failed');
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('thread_id', '=', thread.id).execute()).toEqual(before);
    expect(await rowsOf(bo.user.id)).toEqual([]);
    expect(await rowsOf(stranger.ada.user.id)).toEqual([]);
  });
});

describe('mentions and who sees the thread (restrictAgentsToTeams)', () => {
  it('refuses to name an agent who cannot see the thread, with 422 and nothing written', async () => {
    const { tenant, ada, bo, thread } = await setup();
    const team = await ctx.app.inject({ method: 'POST', url: '/v1/teams', headers: tenant.headers, payload: { name: 'Billing' } });
    expect(team.statusCode, team.body).toBe(201);
    expect((await patch(thread.id, tenant.headers, { teamId: team.json().data.id })).statusCode).toBe(200);
    const restrict = await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/workspace',
      headers: tenant.headers,
      payload: { restrictAgentsToTeams: true },
    });
    expect(restrict.statusCode, restrict.body).toBe(200);
    const note = { text: 'Can you look?', private: true, mentions: [bo.user.id] };
    const refused = await post(`/v1/threads/${thread.id}/messages`, tenant.headers, note);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().error.message).toContain(`${bo.user.id} cannot see this thread`);
    expect(await rowsOf(bo.user.id)).toEqual([]);
    // Once Bo is on the thread's team, the same note names him.
    const members = await ctx.app.inject({
      method: 'PUT',
      url: `/v1/teams/${team.json().data.id}/members`,
      headers: tenant.headers,
      payload: { userIds: [bo.user.id] },
    });
    expect(members.statusCode, members.body).toBe(200);
    expect((await post(`/v1/threads/${thread.id}/messages`, tenant.headers, note)).statusCode).toBe(201);
    expect(await rowsOf(bo.user.id)).toMatchObject([{ type: 'mentioned', thread_id: thread.id }]);
    expect(await rowsOf(ada.user.id)).toEqual([]);
  });
});

describe('assigned', () => {
  it('tells the user someone else assigned, naming who and the activity line', async () => {
    const { ada, bo, thread } = await setup();
    const res = await patch(thread.id, ada.headers, { assigneeId: bo.user.id });
    expect(res.statusCode, res.body).toBe(200);
    const rows = await rowsOf(bo.user.id);
    expect(rows).toMatchObject([{ type: 'assigned', thread_id: thread.id, actor_id: ada.user.id }]);
    const line = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', rows[0]!.message_id).executeTakeFirstOrThrow();
    expect(line).toMatchObject({ kind: 'activity', thread_id: thread.id });
    expect(line.text).toContain('assigned');
  });

  it('does not tell a user who took the thread themselves, by PATCH or by replying (assignOnReply)', async () => {
    const one = await setup();
    expect((await patch(one.thread.id, one.ada.headers, { assigneeId: one.ada.user.id })).statusCode).toBe(200);
    expect(await rowsOf(one.ada.user.id)).toEqual([]);
    const two = await setup();
    expect((await post(`/v1/threads/${two.thread.id}/messages`, two.bo.headers, { text: 'Mine' })).statusCode).toBe(202);
    const assignee = await ctx.deps.db
      .selectFrom('threads')
      .select('assignee_id')
      .where('id', '=', two.thread.id)
      .executeTakeFirstOrThrow();
    expect(assignee.assignee_id).toBe(two.bo.user.id);
    expect(await rowsOf(two.bo.user.id)).toEqual([]);
  });

  it('names no actor when an API key or routing assigned', async () => {
    const { tenant, connection, bo, ada, thread } = await setup();
    expect((await patch(thread.id, tenant.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    expect(await rowsOf(bo.user.id)).toMatchObject([{ type: 'assigned', thread_id: thread.id, actor_id: null }]);

    // Routing: a new thread on an autoAssign connection goes to the least loaded agent (Ada,
    // Bo has one open thread), who is told it was assigned, not that the contact wrote.
    await ctx.deps.db.updateTable('connections').set({ auto_assign: true }).where('id', '=', connection.id).execute();
    await apply(delivery(connection, '+15550001111', [`sms-route-${thread.id}`]));
    const routed = await rowsOf(ada.user.id);
    expect(routed).toMatchObject([{ type: 'assigned', actor_id: null }]);
    const line = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', routed[0]!.message_id).executeTakeFirstOrThrow();
    expect(line.kind).toBe('activity');
    expect(line.thread_id).toBe(routed[0]!.thread_id);
  });
});

describe('message', () => {
  it("tells the assignee of each new contact message in their thread, none for unassigned threads or a provider's retry", async () => {
    const { tenant, connection, ada, bo } = await setup();
    const from = '+15550002222';
    await apply(delivery(connection, from, ['m-1']));
    expect(await ctx.deps.db.selectFrom('notifications').select('id').where('workspace_id', '=', tenant.workspace.id).execute()).toEqual(
      [],
    );
    const threadId = (
      await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', 'm-1').executeTakeFirstOrThrow()
    ).thread_id;
    expect((await patch(threadId, ada.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    await apply(delivery(connection, from, ['m-2', 'm-3']));
    await apply(delivery(connection, from, ['m-3'])); // a retry inserts nothing new
    const ids = await ctx.deps.db.selectFrom('messages').select('id').where('external_id', 'in', ['m-2', 'm-3']).orderBy('id').execute();
    const messages = (await rowsOf(bo.user.id)).filter((n) => n.type === 'message');
    expect(messages).toMatchObject(ids.map((m) => ({ thread_id: threadId, message_id: m.id, actor_id: null })));
    expect(await rowsOf(ada.user.id)).toEqual([]);
  });

  it('tells a deactivated user nothing: no mention, no message in the thread still theirs', async () => {
    const { tenant, connection, ada, bo } = await setup();
    const from = '+15550005555';
    await apply(delivery(connection, from, ['d-1']));
    const threadId = (
      await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', 'd-1').executeTakeFirstOrThrow()
    ).thread_id;
    expect((await patch(threadId, ada.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    const deactivated = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/users/${bo.user.id}`,
      headers: tenant.headers,
      payload: { active: false },
    });
    expect(deactivated.statusCode, deactivated.body).toBe(200);
    const before = (await rowsOf(bo.user.id)).length;
    await apply(delivery(connection, from, ['d-2']));
    const note = await post(`/v1/threads/${threadId}/messages`, ada.headers, { text: 'Bo?', private: true, mentions: [bo.user.id] });
    expect(note.statusCode, note.body).toBe(201);
    expect(await rowsOf(bo.user.id)).toHaveLength(before);
    expect(
      await ctx.deps.db.selectFrom('notification_mail_queue').select('notification_id').where('user_id', '=', bo.user.id).execute(),
    ).toEqual([]);
  });

  it('writes the notifications of a whole batch, across threads and users, with one statement', async () => {
    const { tenant, connection, ada, bo } = await setup();
    await apply({
      ...delivery(connection, '+15550003333', ['b-1']),
      events: [...delivery(connection, '+15550003333', ['b-1']).events, ...delivery(connection, '+15550004444', ['b-2']).events],
    });
    const threadOf = async (id: string) =>
      (await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', id).executeTakeFirstOrThrow()).thread_id;
    const [one, two] = [await threadOf('b-1'), await threadOf('b-2')];
    expect((await patch(one, tenant.headers, { assigneeId: ada.user.id })).statusCode).toBe(200);
    expect((await patch(two, tenant.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    const inserts: string[] = [];
    const counter: KyselyPlugin = {
      transformQuery: ({ node }: { node: RootOperationNode }) => {
        const text = node.kind === 'RawNode' ? node.sqlFragments.join('?') : '';
        if (text.includes('INSERT INTO notifications')) inserts.push(text);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const batch = delivery(connection, '+15550003333', ['b-3', 'b-4']);
    batch.events.push(...delivery(connection, '+15550004444', ['b-5']).events);
    await ctx.deps.db.transaction().execute((trx) => applyDeliveries(ctx.deps, trx.withPlugin(counter), [batch], new Date()));
    expect(inserts).toHaveLength(1);
    expect((await rowsOf(ada.user.id)).filter((n) => n.type === 'message')).toHaveLength(2);
    expect((await rowsOf(bo.user.id)).filter((n) => n.type === 'message')).toHaveLength(1);
  });
});

describe('GET /v1/notifications and reading them', () => {
  it("answers only the caller's, newest first, by cursor; ?unread=true; read and read-all", async () => {
    const { ada, bo, tenant } = await setup();
    const threads = [];
    for (let i = 0; i < 3; i++) {
      const t = await seedThread(ctx.deps, { id: (await setup()).connection.id, workspaceId: tenant.workspace.id });
      threads.push(t);
      expect((await patch(t.id, ada.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    }
    expect((await patch(threads[0]!.id, bo.headers, { assigneeId: ada.user.id })).statusCode).toBe(200);
    const first = await list(bo.headers, '?limit=2');
    expect(first.data.map((n) => n.threadId)).toEqual([threads[2]!.id, threads[1]!.id]);
    expect(first.meta.nextCursor).toBeDefined();
    const second = await list(bo.headers, `?limit=2&cursor=${first.meta.nextCursor}`);
    expect(second.data.map((n) => n.threadId)).toEqual([threads[0]!.id]);
    expect(second.meta.nextCursor).toBeUndefined();
    expect((await list(ada.headers)).data.map((n) => n.threadId)).toEqual([threads[0]!.id]);

    const id = first.data[0]!.id as number;
    const read = await post(`/v1/notifications/${id}/read`, bo.headers);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().data).toMatchObject({ id, readAt: expect.any(String) });
    expect((await list(bo.headers, '?unread=true')).data.map((n) => n.id)).not.toContain(id);
    expect((await list(bo.headers, '?unread=true')).data).toHaveLength(2);
    // Someone else's is not found, and stays unread.
    const adas = (await list(ada.headers)).data[0]!.id as number;
    expect((await post(`/v1/notifications/${adas}/read`, bo.headers)).statusCode).toBe(404);
    expect((await list(ada.headers, '?unread=true')).data).toHaveLength(1);

    const all = await post('/v1/notifications/read-all', bo.headers);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().data).toEqual({ read: 2 });
    expect((await list(bo.headers, '?unread=true')).data).toEqual([]);
    expect((await list(bo.headers)).data).toHaveLength(3);
    expect((await list(ada.headers, '?unread=true')).data).toHaveLength(1);
  });

  it('refuses an API key (403 forbidden)', async () => {
    const { tenant } = await setup();
    for (const res of [
      await ctx.app.inject({ method: 'GET', url: '/v1/notifications', headers: tenant.headers }),
      await post('/v1/notifications/read-all', tenant.headers),
      await post('/v1/notifications/1/read', tenant.headers),
    ]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
  });
});

describe('notification.created', () => {
  it("reaches only its user's sockets, not another user's of the same workspace", async () => {
    const { ada, bo, thread } = await setup();
    const bos = await openSocket(`${wsBase}/v1/realtime?token=${tokenOf(bo.headers)}`);
    const adas = await openSocket(`${wsBase}/v1/realtime?token=${tokenOf(ada.headers)}`);
    await bos.frame((f) => f.type === 'ready', 'ready');
    await adas.frame((f) => f.type === 'ready', 'ready');
    expect((await patch(thread.id, ada.headers, { assigneeId: bo.user.id })).statusCode).toBe(200);
    const frame = await bos.frame((f) => f.type === 'notification.created', 'the notification on Bo’s socket');
    const [row] = await rowsOf(bo.user.id);
    expect(frame.data).toEqual({
      id: row!.id,
      type: 'assigned',
      threadId: thread.id,
      messageId: row!.message_id,
      actorId: ada.user.id,
      createdAt: row!.created_at.toISOString(),
      readAt: null,
    });
    // A later event for the whole workspace reaches Ada's socket: whatever came before it did too.
    expect((await post(`/v1/threads/${thread.id}/viewing`, bo.headers, {})).statusCode).toBe(200);
    await adas.frame((f) => f.type === 'thread.viewing', 'the marker on Ada’s socket');
    // Bo's socket opening tells the workspace he is connected (user.updated): not his notification.
    expect(adas.frames.map((f) => f.type).filter((t) => t !== 'user.updated')).toEqual([
      'ready',
      'message.created',
      'thread.updated',
      'thread.viewing',
    ]);
    bos.ws.close();
    adas.ws.close();
  });
});

describe('POST /v1/threads/:id/viewing', () => {
  it('announces thread.viewing to the workspace’s sockets and answers what it announced', async () => {
    const { ada, bo, thread } = await setup();
    const bos = await openSocket(`${wsBase}/v1/realtime?token=${tokenOf(bo.headers)}`);
    await bos.frame((f) => f.type === 'ready', 'ready');
    const res = await post(`/v1/threads/${thread.id}/viewing`, ada.headers, { typing: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ threadId: thread.id, userId: ada.user.id, typing: true });
    const frame = await bos.frame((f) => f.type === 'thread.viewing', 'thread.viewing');
    expect(frame.data).toEqual({ threadId: thread.id, userId: ada.user.id, typing: true });
    const bare = await post(`/v1/threads/${thread.id}/viewing`, ada.headers, {});
    expect(bare.statusCode, bare.body).toBe(200);
    const quiet = await bos.frame((f) => f.type === 'thread.viewing' && f.data.typing === false, 'viewing without typing');
    expect(quiet.data).toEqual({ threadId: thread.id, userId: ada.user.id, typing: false });
    // `typing` is optional, and so is the body: a ping without one is "only looking" too.
    const none = await ctx.app.inject({ method: 'POST', url: `/v1/threads/${thread.id}/viewing`, headers: ada.headers });
    expect(none.statusCode, none.body).toBe(200);
    bos.ws.close();
  });

  it('is 404 on another workspace’s thread, 422 on a bad body, 403 for an API key', async () => {
    const { tenant, ada, thread } = await setup();
    const other = await setup();
    expect((await post(`/v1/threads/${other.thread.id}/viewing`, ada.headers, {})).statusCode).toBe(404);
    const bad = await post(`/v1/threads/${thread.id}/viewing`, ada.headers, { typing: 'yes' });
    expect(bad.statusCode, bad.body).toBe(422);
    expect((await post(`/v1/threads/${thread.id}/viewing`, ada.headers, { typing: true, extra: 1 })).statusCode).toBe(422);
    expect((await post(`/v1/threads/${thread.id}/viewing`, tenant.headers, {})).statusCode).toBe(403);
  });
});
