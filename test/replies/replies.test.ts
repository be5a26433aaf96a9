import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { REALTIME_CHANNEL } from '../../src/realtime/publish.js';
import { SEND_QUEUE } from '../../src/replies/send-message.enqueue.js';
import { sendQueue } from '../../src/replies/send-message.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';
import { inbound } from '../threads/workflow-helpers.js';

const SECRET = 'replies-webhook-secret';
const TOKEN = 'EAAG-replies-page-token-0123456789';
const fake = await startFakeProviders();
const smtp = await startSmtpServer();
afterAll(() => Promise.all([fake.close(), smtp.close()]));
const EMAIL_SECRET = 'replies-email-bearer-secret';
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  workers: true,
  logLines,
  // The test's SMTP server listens on loopback.
  env: {
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET, apiBaseUrl: fake.baseUrls.whatsapp },
      email: { webhookSecret: EMAIL_SECRET },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352242922',
  credentials: { accessToken: TOKEN },
});
const SEND_PATH = '/graph/v23.0/106540352242922/messages';

beforeEach(() => fake.reset());

/** A contact writes in on WhatsApp; answers the thread the worker made. */
async function inboundThread(from: string) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.contacts[0].wa_id = from;
  value.messages[0].from = from;
  value.messages[0].id = `wamid.in-${from}`;
  // Written just now, so the 24-hour reply window is open.
  value.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
  return waitFor(
    () => ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', `wamid.in-${from}`).executeTakeFirst(),
    'the inbound message',
  ).then((m) => m.thread_id);
}

const reply = (threadId: number, text: string, headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers: { ...tenant.headers, 'content-type': 'application/json', ...headers },
    payload: { text },
  });

const messageRow = (id: number) => ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const settled = (id: number) =>
  waitFor(async () => {
    const m = await messageRow(id);
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);

function statusWebhook(externalId: string, status: string, phoneNumberId = '106540352242922') {
  const payload = JSON.parse(fixture('whatsapp', 'statuses.json'));
  payload.entry[0].changes[0].value.metadata.phone_number_id = phoneNumberId;
  payload.entry[0].changes[0].value.statuses = [{ id: externalId, status, timestamp: '1750263773', recipient_id: '16505551234' }];
  return deliverSigned(ctx, 'whatsapp', payload);
}

/** Makes the provider hold its answer (`messages[0].id` = `wamid`) until the returned function is called. */
function holdSend(wamid: string, to: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  fake.behave(SEND_PATH, {
    heldUntil: held,
    answer: { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: wamid }] } },
  });
  return release;
}

const receiptsProcessed = () =>
  waitFor(
    async () =>
      Number(
        (await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_inbox WHERE status = 'received'`.execute(ctx.deps.db)).rows[0]!.n,
      ) === 0,
    'the receipts to be processed',
  );

describe('POST /v1/threads/:id/messages', () => {
  it('answers 202 with the queued message, sends it through the provider, and the receipts move it to read', async () => {
    const threadId = await inboundThread('16505550001');
    const res = await reply(threadId, 'Yes, we are open until 6 pm.');
    expect(res.statusCode, res.body).toBe(202);
    const data = res.json().data;
    expect(data).toMatchObject({
      threadId,
      direction: 'outbound',
      status: 'queued',
      externalId: null,
      text: 'Yes, we are open until 6 pm.',
      error: null,
    });
    const sent = await settled(data.id);
    expect(sent.status).toBe('sent');
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.path).toBe(SEND_PATH);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.parsed).toMatchObject({
      messaging_product: 'whatsapp',
      to: '16505550001',
      type: 'text',
      text: { body: 'Yes, we are open until 6 pm.' },
    });
    expect(sent.external_id).toBe((request.response!.body as { messages: { id: string }[] }).messages[0]!.id);
    // The provider's own status webhooks reconcile on the id it gave.
    for (const status of ['delivered', 'read', 'delivered']) {
      expect((await statusWebhook(sent.external_id!, status)).statusCode).toBe(200);
    }
    await waitFor(async () => (await messageRow(data.id)).status === 'read', 'the reply to be read');
    // The thread shows the reply as its latest message.
    const thread = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${threadId}`, headers: tenant.headers })).json().data;
    expect(thread.lastMessagePreview).toBe('Yes, we are open until 6 pm.');
  });

  it('a receipt that arrives while its send is being recorded moves the reply once the send is', async () => {
    const threadId = await inboundThread('16505550010');
    // The provider takes the reply at once and reports it read before its answer reaches the
    // service: the send stays in flight (as behind a slower send of its batch) until released.
    const wamid = 'wamid.HBgLMTY1MDU1NTAwMTAVAgARGBI3RTlBRDc0QkI2RkE3QUVCMEIA';
    const release = holdSend(wamid, '16505550010');
    const res = await reply(threadId, 'It is on its way.');
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().data.id as number;
    await waitFor(async () => fake.requests.length === 1, 'the send to reach the provider');
    for (const status of ['delivered', 'read']) expect((await statusWebhook(wamid, status)).statusCode).toBe(200);
    await receiptsProcessed();
    expect((await messageRow(id)).status).toBe('queued');
    release();
    const moved = await waitFor(async () => {
      const m = await messageRow(id);
      return m.status === 'read' ? m : undefined;
    }, 'the reply to be read');
    expect(moved.external_id).toBe(wamid);
    // One change, announced once, as it stands: read.
    const { rows } = await sql<{ body: string }>`
      SELECT body FROM webhook_events WHERE type = 'message.updated' AND body::jsonb #>> '{data,id}' = ${String(id)}`.execute(ctx.deps.db);
    expect(rows.map((r) => JSON.parse(r.body).data.status)).toEqual(['read']);
    // Nothing is left waiting for it.
    expect(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM early_receipts`.execute(ctx.deps.db)).rows[0]!.n)).toBe(0);
  });

  it("an early receipt from another account's number never moves the reply", async () => {
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242999' });
    const threadId = await inboundThread('16505550011');
    const wamid = 'wamid.HBgLMTY1MDU1NTAwMTEVAgARGBI5QTFCMkMzRDRFNUY2QTdCOEMA';
    const release = holdSend(wamid, '16505550011');
    const res = await reply(threadId, 'Noted.');
    const id = res.json().data.id as number;
    await waitFor(async () => fake.requests.length === 1, 'the send to reach the provider');
    expect((await statusWebhook(wamid, 'read', '106540352242999')).statusCode).toBe(200);
    await receiptsProcessed();
    release();
    expect((await settled(id)).status).toBe('sent');
    // Nor once the send is recorded: the receipt names a message that account never sent.
    expect((await statusWebhook(wamid, 'read', '106540352242999')).statusCode).toBe(200);
    await receiptsProcessed();
    expect((await messageRow(id)).status).toBe('sent');
  });

  it("a permanent provider error ends failed with the provider's text", async () => {
    const threadId = await inboundThread('16505550002');
    fake.behave(SEND_PATH, 'bad-request');
    const res = await reply(threadId, 'hello');
    const failed = await settled(res.json().data.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.error!.length).toBeGreaterThan(0);
    expect(failed.error).not.toContain(TOKEN);
    expect(fake.requests).toHaveLength(1);
  });

  it("a provider's error text with a NUL or a lone surrogate in it ends failed, sent once", async () => {
    const threadId = await inboundThread('16505550013');
    fake.behave(SEND_PATH, { status: 400, body: { error: { message: 'bad \u0000 request \ud800', code: 100 } } });
    const failed = await settled((await reply(threadId, 'hello')).json().data.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('bad \ufffd request \ufffd');
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(1);
  });

  it("a provider's message id with a NUL in it is kept as a receipt names it (U+FFFD), sent once", async () => {
    const threadId = await inboundThread('16505550014');
    fake.behave(SEND_PATH, { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.a\u0000b' }] } });
    const sent = await settled((await reply(threadId, 'hello')).json().data.id);
    expect(sent).toMatchObject({ status: 'sent', external_id: 'wamid.a\ufffdb' });
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(1);
  });

  it('a 500 schedules the next attempt 60 s later, and the second attempt sends it once', async () => {
    const threadId = await inboundThread('16505550003');
    fake.behave(SEND_PATH, 'server-error');
    const { id } = (await reply(threadId, 'are you there?')).json().data;
    const retry = await waitFor(async () => {
      const { rows } = await sql<{ data: { messageId: number; attempt: number }; start_after: Date; created_on: Date }>`
        SELECT data, start_after, created_on FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ${id} AND (data->>'attempt')::int = 2`.execute(
        ctx.deps.db,
      );
      return rows[0];
    }, 'the retry job');
    expect((retry.start_after.getTime() - retry.created_on.getTime()) / 1000).toBeGreaterThanOrEqual(59);
    expect((await messageRow(id)).status).toBe('queued');
    // The provider recovers; the second attempt (run now instead of in a minute) sends it.
    fake.behave(SEND_PATH, 'ok');
    await sendQueue.worker!.handle(ctx.deps, [{ id: 'retry', data: retry.data }]);
    expect((await messageRow(id)).status).toBe('sent');
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(2);
    // A duplicate of the job finds the message sent and sends nothing.
    await sendQueue.worker!.handle(ctx.deps, [{ id: 'dup', data: retry.data }]);
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(2);
  });

  it('a 429 asking to wait longer than a date can hold waits a day, sending nothing in between', async () => {
    const threadId = await inboundThread('16505550012');
    fake.behave(SEND_PATH, { rateLimited: '99999999999999' });
    const { id } = (await reply(threadId, 'slow down')).json().data;
    const retry = await waitFor(async () => {
      const { rows } = await sql<{ start_after: Date; created_on: Date }>`
        SELECT start_after, created_on FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ${id} AND (data->>'attempt')::int = 2`.execute(
        ctx.deps.db,
      );
      return rows[0];
    }, 'the retry job');
    expect((retry.start_after.getTime() - retry.created_on.getTime()) / 1000).toBeCloseTo(24 * 60 * 60, -1);
    // The attempt is settled (its claim released): no other execution takes it over and sends again.
    const row = await messageRow(id);
    expect(row.status).toBe('queued');
    expect(row.send_claim_token).toBeNull();
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(1);
  });

  it('gives up after the last retry with failed', async () => {
    const threadId = await inboundThread('16505550004');
    fake.behave(SEND_PATH, 'server-error');
    const { id } = (await reply(threadId, 'last try')).json().data;
    await waitFor(async () => fake.requests.length === 1, 'the first attempt');
    // Its retryable outcome releases the send's claim; the last attempt may claim it after that.
    await waitFor(
      async () => (await messageRow(id)).send_claim_token === null && (await messageRow(id)).send_attempt === 1,
      'the first attempt to settle',
    );
    await sendQueue.worker!.handle(ctx.deps, [{ id: 'last', data: { messageId: id, attempt: 4 } }]);
    const row = await messageRow(id);
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/^gave up after 4 attempts: HTTP 500/);
  });

  it('sends nothing once its connection is deleted: the retry fails the reply', async () => {
    const account = '106540352200077';
    const path = `/graph/v23.0/${account}/messages`;
    const doomed = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'whatsapp',
      externalAccountId: account,
      credentials: { accessToken: TOKEN },
    });
    const threadId = await inbound(ctx, doomed, '16505550077', 'wamid.in-doomed');
    fake.behave(path, 'server-error');
    const { id } = (await reply(threadId, 'still there?')).json().data;
    const retry = await waitFor(async () => {
      const { rows } = await sql<{ data: { messageId: number; attempt: number } }>`
        SELECT data FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ${id} AND (data->>'attempt')::int = 2`.execute(
        ctx.deps.db,
      );
      return rows[0];
    }, 'the retry job');
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${doomed.id}`, headers: tenant.headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    fake.behave(path, 'ok');
    await sendQueue.worker!.handle(ctx.deps, [{ id: 'after-delete', data: retry.data }]);
    const row = await messageRow(id);
    expect(row.status).toBe('failed');
    expect(row.error).toBe("this thread's connection was deleted");
    expect(fake.requests.filter((r) => r.path === path)).toHaveLength(1);
  });

  it('a replayed Idempotency-Key answers the first answer and sends once', async () => {
    const threadId = await inboundThread('16505550005');
    const first = await reply(threadId, 'only once', { 'idempotency-key': 'reply-7f3a' });
    const again = await reply(threadId, 'only once', { 'idempotency-key': 'reply-7f3a' });
    expect(again.statusCode).toBe(202);
    expect(again.json().data).toEqual(first.json().data);
    await settled(first.json().data.id);
    const rows = await ctx.deps.db
      .selectFrom('messages')
      .select('id')
      .where('thread_id', '=', threadId)
      .where('direction', '=', 'outbound')
      .execute();
    expect(rows).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
    const other = await reply(threadId, 'something else', { 'idempotency-key': 'reply-7f3a' });
    expect(other.statusCode).toBe(409);
  });

  it('an Idempotency-Key is kept 24 hours: a day later the same key is a new request', async () => {
    const threadId = await inboundThread('16505550025');
    const first = await reply(threadId, 'daily digest', { 'idempotency-key': 'reply-daily' });
    expect(first.statusCode, first.body).toBe(202);
    await settled(first.json().data.id);
    // A day and a minute later, before the maintenance job (every 10 minutes) has removed the key.
    await sql`UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 minute' WHERE key = 'reply-daily'`.execute(
      ctx.deps.db,
    );
    const next = await reply(threadId, 'daily digest', { 'idempotency-key': 'reply-daily' });
    expect(next.statusCode, next.body).toBe(202);
    expect(next.json().data.id).not.toBe(first.json().data.id);
    await settled(next.json().data.id);
    expect(fake.requests).toHaveLength(2);
    // And the new answer is the one the key now replays.
    const again = await reply(threadId, 'daily digest', { 'idempotency-key': 'reply-daily' });
    expect(again.json().data.id).toBe(next.json().data.id);
  });

  it('answers two concurrent replies with one Idempotency-Key with one message and one send', async () => {
    const threadId = await inboundThread('16505550015');
    const [a, b] = await Promise.all([
      reply(threadId, 'at the same time', { 'idempotency-key': 'reply-race-1' }),
      reply(threadId, 'at the same time', { 'idempotency-key': 'reply-race-1' }),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    expect(b.json().data).toEqual(a.json().data);
    await settled(a.json().data.id);
    const rows = await ctx.deps.db
      .selectFrom('messages')
      .select('id')
      .where('thread_id', '=', threadId)
      .where('direction', '=', 'outbound')
      .execute();
    expect(rows).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('refuses read keys (403), unknown threads (404), empty or long text (422)', async () => {
    const threadId = await inboundThread('16505550006');
    const readKey = await makeTenant(ctx.deps, { scopes: ['read'] });
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/threads/${threadId}/messages`,
          headers: { ...readKey.headers, 'content-type': 'application/json' },
          payload: { text: 'x' },
        })
      ).statusCode,
    ).toBe(403);
    expect((await reply(999_999, 'x')).statusCode).toBe(404);
    expect((await reply(threadId, '')).statusCode).toBe(422);
    expect((await reply(threadId, 'x'.repeat(4097))).statusCode).toBe(422);
    // Another workspace's thread is not found.
    const other = await makeTenant(ctx.deps);
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/threads/${threadId}/messages`,
          headers: { ...other.headers, 'content-type': 'application/json' },
          payload: { text: 'x' },
        })
      ).statusCode,
    ).toBe(404);
    expect(fake.requests).toHaveLength(0);
  });

  it('takes a write key and up to 4096 characters, counted as characters (an emoji is one)', async () => {
    const threadId = await inboundThread('16505550009');
    const writeKey = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: tenant.headers,
      payload: { name: 'writer', scopes: ['write'] },
    });
    const headers = { 'x-api-key': writeKey.json().data.key as string };
    const res = await reply(threadId, '😀'.repeat(4096), headers);
    expect(res.statusCode, res.body.slice(0, 200)).toBe(202);
    expect(res.json().data.text).toBe('😀'.repeat(4096));
    expect((await reply(threadId, '😀'.repeat(4097), headers)).statusCode).toBe(422);
    await settled(res.json().data.id);
  });

  it('publishes message.created and message.updated on the realtime bus', async () => {
    const threadId = await inboundThread('16505550008');
    const listener = new pg.Client({ connectionString: ctx.database.url });
    await listener.connect();
    const events: { type: string; data: Record<string, unknown> }[] = [];
    listener.on('notification', (n) => events.push(JSON.parse(n.payload!)));
    await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
    try {
      const { id } = (await reply(threadId, 'live')).json().data;
      await waitFor(async () => events.some((e) => e.type === 'message.updated' && e.data.id === id), 'message.updated');
      expect(events.filter((e) => e.type.startsWith('message.') && e.data.id === id).map((e) => [e.type, e.data.status])).toEqual([
        ['message.created', 'queued'],
        ['message.updated', 'sent'],
      ]);
    } finally {
      await listener.end();
    }
  });

  it('announces the thread with its new last message (thread.updated), for a reply and for a conversation the business starts', async () => {
    const listener = new pg.Client({ connectionString: ctx.database.url });
    await listener.connect();
    const events: { type: string; data: Record<string, unknown> }[] = [];
    listener.on('notification', (n) => events.push(JSON.parse(n.payload!)));
    await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
    const logged = async (threadId: number, preview: string) =>
      (await ctx.deps.db.selectFrom('webhook_events').select('body').where('type', '=', 'thread.updated').execute())
        .map((r) => JSON.parse(r.body).data)
        .filter((t: { id: number; lastMessagePreview: string }) => t.id === threadId && t.lastMessagePreview === preview);
    try {
      const threadId = await inboundThread('16505550011');
      expect((await reply(threadId, 'See you at six')).statusCode).toBe(202);
      await waitFor(
        async () =>
          events.find((e) => e.type === 'thread.updated' && e.data.id === threadId && e.data.lastMessagePreview === 'See you at six'),
        'thread.updated on the bus',
      );
      expect(await logged(threadId, 'See you at six')).toHaveLength(1);

      const started = await ctx.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: { ...tenant.headers, 'content-type': 'application/json' },
        payload: { connectionId: whatsapp.id, to: '+16505550011', text: 'Your table is ready' },
      });
      expect(started.statusCode, started.body).toBe(202);
      expect(started.json().data.thread.id).toBe(threadId);
      await waitFor(
        async () =>
          events.find((e) => e.type === 'thread.updated' && e.data.id === threadId && e.data.lastMessagePreview === 'Your table is ready'),
        'thread.updated for the started conversation',
      );
      expect(await logged(threadId, 'Your table is ready')).toHaveLength(1);
    } finally {
      await listener.end();
    }
  });

  it('refuses a channel that cannot send with 422', async () => {
    const ai = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'ai', externalAccountId: 'assistant-1' });
    const contact = await ctx.deps.db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Bot user' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const thread = await ctx.deps.db
      .insertInto('threads')
      .values({ workspace_id: tenant.workspace.id, connection_id: ai.id, contact_id: contact.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await reply(thread.id, 'hi');
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toEqual({ code: 'validation_failed', message: 'this channel cannot send' });
  });

  it('answers an e-mail in its thread: Re: subject, In-Reply-To and References of the last inbound mail', async () => {
    await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'email',
      externalAccountId: 'support@acme.test',
      credentials: { smtpUrl: smtp.url },
    });
    const body = fixture('email', 'inbound.json');
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/webhooks/email',
          headers: { 'content-type': 'application/json', 'x-vendor-auth': EMAIL_SECRET },
          payload: body,
        })
      ).statusCode,
    ).toBe(200);
    const inbound = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('messages')
          .select('thread_id')
          .where('external_id', '=', '<CAF=3Dx+8u1Zk2Q@mail.example.org>')
          .executeTakeFirst(),
      'the inbound mail',
    );
    const { id } = (await reply(inbound.thread_id, 'Thanks Dana, we have removed the duplicate.')).json().data;
    const sent = await settled(id);
    expect(sent.status, sent.error ?? '').toBe('sent');
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.to).toEqual(['dana@example.org']);
    expect(mail.mail.from?.value[0]?.address).toBe('support@acme.test');
    expect(mail.mail.subject).toBe('Re: Invoice question');
    expect(mail.mail.inReplyTo).toBe('<CAF=3Dx+8u1Zk2Q@mail.example.org>');
    expect(mail.mail.text?.trim()).toBe('Thanks Dana, we have removed the duplicate.');
    // The Message-ID sent is the id a bounce reconciles on.
    expect(sent.external_id).toBe(mail.mail.messageId);
  });

  it('never shows the credential in an answer or a log line', async () => {
    const threadId = await inboundThread('16505550007');
    const res = await reply(threadId, 'secret-free');
    await settled(res.json().data.id);
    const connections = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers });
    expect(connections.json().data.find((c: { id: number }) => c.id === whatsapp.id)).toMatchObject({ hasCredentials: true });
    for (const body of [res.body, connections.body]) expect(body).not.toContain(TOKEN);
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(JSON.stringify(line)).not.toContain(TOKEN);
  });
});

describe("a reply's preview", () => {
  it('is cut at 140 characters without splitting an emoji in two', async () => {
    const threadId = await inboundThread('16505550099');
    // The emoji's two UTF-16 halves sit at units 139 and 140: a cut there would leave one half.
    const res = await reply(threadId, `${'a'.repeat(139)}😀 and more`);
    expect(res.statusCode, res.body).toBe(202);
    const thread = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${threadId}`, headers: tenant.headers })).json().data;
    expect(thread.lastMessagePreview).toBe(`${'a'.repeat(139)}😀`);
  });
});
