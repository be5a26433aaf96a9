import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { smsFromContact } from '../helpers/inbound.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

/**
 * Workspace setting assignOnReply (default true): a signed-in user's reply on an unassigned
 * thread assigns it to them in the reply's own commit, as a PATCH would (activity line,
 * thread.updated); a note, an API key's reply, an assigned thread or the setting off assign
 * nobody.
 */
const ctx = await useTestContext();

async function setup() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
    integrationKey: 'sms',
    externalAccountId: `+1555${Date.now() % 1e7}`,
  });
  const agent = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  return { tenant, agent, thread };
}
const reply = (threadId: number, headers: Record<string, string>, payload: Record<string, unknown> = { text: 'On it' }) =>
  ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers, payload });
const threadOf = async (id: number, headers: Record<string, string>) =>
  (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}`, headers })).json().data;
const transcript = async (id: number, headers: Record<string, string>) =>
  (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}/messages?limit=100`, headers })).json().data as {
    kind?: string;
    text: string;
    authorId: number | null;
  }[];

describe('assignOnReply', () => {
  it("assigns an unassigned thread to the user who replies, with an activity line and the reply's author", async () => {
    const { tenant, agent, thread } = await setup();
    const res = await reply(thread.id, agent.headers);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.authorId).toBe(agent.user.id);
    expect((await threadOf(thread.id, tenant.headers)).assigneeId).toBe(agent.user.id);
    const lines = await transcript(thread.id, tenant.headers);
    expect(lines.some((m) => m.text.includes('assigned') && m.authorId === agent.user.id)).toBe(true);
  });

  it('leaves the thread as it is for a note, an API key, a thread already assigned, and the setting off', async () => {
    const note = await setup();
    expect((await reply(note.thread.id, note.agent.headers, { text: 'for us', private: true })).statusCode).toBe(201);
    expect((await threadOf(note.thread.id, note.tenant.headers)).assigneeId).toBeNull();

    const key = await setup();
    expect((await reply(key.thread.id, key.tenant.headers)).statusCode).toBe(202);
    expect((await threadOf(key.thread.id, key.tenant.headers)).assigneeId).toBeNull();

    const taken = await setup();
    const other = await signedInUser(ctx.app, ctx.deps, taken.tenant.workspace.id);
    await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/threads/${taken.thread.id}`,
      headers: taken.tenant.headers,
      payload: { assigneeId: other.user.id },
    });
    expect((await reply(taken.thread.id, taken.agent.headers)).statusCode).toBe(202);
    expect((await threadOf(taken.thread.id, taken.tenant.headers)).assigneeId).toBe(other.user.id);

    const off = await setup();
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/workspace',
      headers: off.tenant.headers,
      payload: { assignOnReply: false },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await reply(off.thread.id, off.agent.headers)).statusCode).toBe(202);
    expect((await threadOf(off.thread.id, off.tenant.headers)).assigneeId).toBeNull();
  });

  it('gives a thread that several users answer at once to the first of them, once; its first response is that reply', async () => {
    for (let round = 0; round < 3; round++) {
      const { tenant, agent } = await setup();
      const connection = await ctx.deps.db
        .selectFrom('connections')
        .select('external_account_id as externalAccountId')
        .where('workspace_id', '=', tenant.workspace.id)
        .executeTakeFirstOrThrow();
      const threadId = await smsFromContact(ctx, connection, `+1555${round}000111`);
      const others = [
        await signedInUser(ctx.app, ctx.deps, tenant.workspace.id),
        await signedInUser(ctx.app, ctx.deps, tenant.workspace.id),
      ];
      const answers = await Promise.all([agent, ...others].map((u, i) => reply(threadId, u.headers, { text: `On it ${i}` })));
      for (const res of answers) expect(res.statusCode, res.body).toBe(202);
      const replies = answers
        .map((res) => res.json().data as { id: number; authorId: number; createdAt: string })
        .sort((a, b) => a.id - b.id);
      expect((await threadOf(threadId, tenant.headers)).assigneeId).toBe(replies[0]!.authorId);
      const lines = (await transcript(threadId, tenant.headers)).filter((m) => m.kind === 'activity');
      expect(lines).toHaveLength(1);
      const conversation = await ctx.deps.db
        .selectFrom('conversations')
        .select('first_response_at')
        .where('thread_id', '=', threadId)
        .executeTakeFirstOrThrow();
      expect(conversation.first_response_at?.toISOString()).toBe(replies[0]!.createdAt);
    }
  });

  it('gives the thread a user writes in through POST /v1/conversations to them, new or waiting, before routing', async () => {
    const { tenant, agent } = await setup();
    const busy = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'sms',
      externalAccountId: `+1666${Date.now() % 1e7}`,
    });
    const routing = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${connection.id}`,
      headers: tenant.headers,
      payload: { autoAssign: true },
    });
    expect(routing.statusCode, routing.body).toBe(200);
    const start = (headers: Record<string, string>, to: string) =>
      ctx.app.inject({ method: 'POST', url: '/v1/conversations', headers, payload: { connectionId: connection.id, to, text: 'Hello' } });

    // A new thread: the writer takes it, by their own activity line (routing's has no author).
    const fresh = await start(agent.headers, '+14155550161');
    expect(fresh.statusCode, fresh.body).toBe(202);
    expect(fresh.json().data.thread.assigneeId).toBe(agent.user.id);
    const lines = await transcript(fresh.json().data.thread.id, tenant.headers);
    expect(lines.filter((m) => m.kind === 'activity').map((m) => m.authorId)).toEqual([agent.user.id]);

    // A thread left waiting (everyone busy when an API key started it) goes to who writes next.
    for (const u of [agent, busy]) {
      const away = await ctx.app.inject({ method: 'PATCH', url: '/v1/users/me', headers: u.headers, payload: { availability: 'busy' } });
      expect(away.statusCode, away.body).toBe(200);
    }
    const waiting = await start(tenant.headers, '+14155550162');
    expect(waiting.json().data.thread.assigneeId).toBeNull();
    const again = await start(busy.headers, '+14155550162');
    expect(again.json().data.thread).toMatchObject({ id: waiting.json().data.thread.id, assigneeId: busy.user.id });
  });
});
