import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { SEND_QUEUE } from '../../src/replies/send-message.enqueue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, openSocket, startVisitor, visitorSays } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus, signedInUser } from './workflow-helpers.js';

const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: 'notes-secret', apiBaseUrl: fake.baseUrls.whatsapp } }) },
});
const tenant = await makeTenant(ctx.deps);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352242933',
  credentials: { accessToken: 'EAAG-notes' },
});
const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
const widget = await makeWidget(ctx.deps, tenant.workspace.id);
const bus = await listenToBus(ctx.database.url);
const wsBase = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');

const post = (threadId: number, payload: object, headers: Record<string, string> = ada.headers) =>
  ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers, payload });
const sendJobs = async (messageId: number) =>
  (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ${messageId}`.execute(
      ctx.deps.db,
    )
  ).rows[0]!.n;
const messageRow = (id: number) => ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('POST /v1/threads/:id/messages {text, private: true}', () => {
  it('stores a note (201, sent, never queued) that never reaches the provider', async () => {
    const threadId = await inbound(ctx, whatsapp, '16505550101', 'wamid.note-in-1', 'Where is my order?');
    const preview = (
      await ctx.deps.db.selectFrom('threads').select('last_message_preview').where('id', '=', threadId).executeTakeFirstOrThrow()
    ).last_message_preview;
    const res = await post(threadId, { text: 'Bo, this one is a VIP', private: true });
    expect(res.statusCode, res.body).toBe(201);
    const note = res.json().data;
    expect(note).toEqual({
      id: expect.any(Number),
      threadId,
      direction: 'outbound',
      externalId: null,
      text: 'Bo, this one is a VIP',
      status: 'sent',
      error: null,
      kind: 'note',
      private: true,
      authorId: ada.user.id,
      mentions: [],
      attachments: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await sendJobs(note.id)).toBe(0);
    // Agents hear of it; the thread's preview stays the conversation's last word with the contact.
    await waitFor(
      async () => bus.find((e) => e.type === 'message.created' && e.data.id === note.id && e.data.kind === 'note'),
      'the note on the bus',
    );
    expect(
      (await ctx.deps.db.selectFrom('threads').select('last_message_preview').where('id', '=', threadId).executeTakeFirstOrThrow())
        .last_message_preview,
    ).toBe(preview);

    // A reply after it is sent; once the provider has it, the provider has had nothing else.
    const reply = await post(threadId, { text: 'It ships today.' });
    expect(reply.statusCode).toBe(202);
    expect(reply.json().data).toMatchObject({ kind: 'message', private: false, authorId: ada.user.id });
    await waitFor(async () => (await messageRow(reply.json().data.id)).status === 'sent', 'the reply to be sent');
    expect(fake.requests.map((r) => (r.parsed as { text?: { body?: string } }).text?.body)).toEqual(['It ships today.']);
    expect((await messageRow(note.id)).status).toBe('sent');
  });

  it('from an API key has no author; a replayed Idempotency-Key answers the same note', async () => {
    const threadId = await inbound(ctx, whatsapp, '16505550102', 'wamid.note-in-2');
    const headers = { ...tenant.headers, 'idempotency-key': 'note-1' };
    const first = await post(threadId, { text: 'checked the logs', private: true }, headers);
    const again = await post(threadId, { text: 'checked the logs', private: true }, headers);
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json().data).toEqual(first.json().data);
    expect(first.json().data.authorId).toBeNull();
    const notes = await ctx.deps.db
      .selectFrom('messages')
      .select('id')
      .where('thread_id', '=', threadId)
      .where('kind', '=', 'note')
      .execute();
    expect(notes).toHaveLength(1);
  });

  it('refuses a misspelt private flag (422) and writes nothing', async () => {
    const threadId = await inbound(ctx, whatsapp, '16505550103', 'wamid.note-in-3');
    for (const payload of [
      { text: 'secret', privat: true },
      { text: 'secret', private: 'yes' },
    ]) {
      const res = await post(threadId, payload);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const rows = await ctx.deps.db
      .selectFrom('messages')
      .select('id')
      .where('thread_id', '=', threadId)
      .where('direction', '=', 'outbound')
      .execute();
    expect(rows).toHaveLength(0);
  });
});

describe('a live chat visitor', () => {
  it('never sees a note or an activity line: not on its socket, not in the visitor API', async () => {
    const visitor = await startVisitor(ctx.app, widget.key, { name: 'Lin' });
    expect((await visitorSays(ctx.app, widget.key, visitor.token, 'Hello?')).statusCode).toBe(201);
    const socket = await openSocket(`${wsBase}/v1/livechat/${widget.key}/socket?visitorToken=${encodeURIComponent(visitor.token)}`);

    const note = (await post(visitor.threadId, { text: 'Looks like a returning customer', private: true })).json().data;
    expect(
      (
        await ctx.app.inject({
          method: 'PATCH',
          url: `/v1/threads/${visitor.threadId}`,
          headers: ada.headers,
          payload: { status: 'pending', labels: ['web'] },
        })
      ).statusCode,
    ).toBe(200);
    const reply = (await post(visitor.threadId, { text: 'Hi Lin, how can I help?' })).json().data;
    // The socket takes events in order: once the reply and its delivery arrived, nothing else came.
    await socket.frame((f) => f.type === 'message.updated' && f.data.id === reply.id, 'the reply delivered to the visitor');
    expect(socket.frames.map((f) => [f.type, f.data.id])).toEqual([
      ['message.created', reply.id],
      ['message.updated', reply.id],
    ]);
    expect(socket.frames.every((f) => f.data.authorId === null)).toBe(true);

    const read = await ctx.app.inject({ method: 'GET', url: `/v1/livechat/${widget.key}/messages`, headers: visitor.headers });
    const seen = read.json().data as { id: number; kind: string }[];
    expect(seen.map((m) => m.kind)).toEqual(['message', 'message']);
    expect(seen.map((m) => m.id)).not.toContain(note.id);
    // The agent's transcript has all of it: the status, the labels, and Ada taking the thread by
    // answering it (assignOnReply), none of which the visitor saw.
    const transcript = (
      await ctx.app.inject({ method: 'GET', url: `/v1/threads/${visitor.threadId}/messages`, headers: tenant.headers })
    ).json().data as { kind: string }[];
    expect(transcript.map((m) => m.kind).sort()).toEqual(['activity', 'activity', 'activity', 'message', 'message', 'note']);
    socket.ws.close();
  });
});
