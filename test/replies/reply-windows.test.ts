import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { SEND_QUEUE } from '../../src/replies/send-message.enqueue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const SECRET = 'reply-windows-webhook-secret';
const TOKEN = 'EAAG-reply-windows-token-0123456789';
const HOUR = 60 * 60 * 1000;
const fake = await startFakeProviders();
afterAll(() => fake.close());

// The deployment's clock, moved by each test: the reply check and the Meta sender read it.
let clock = new Date('2026-03-01T12:00:00.000Z');
const ctx = await useTestContext({
  workers: true,
  now: () => clock,
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET, apiBaseUrl: fake.baseUrls.whatsapp },
      'social_one.native': { apiBaseUrl: fake.baseUrls.social },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const PHONE_ID = '106540352242999';
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: PHONE_ID,
  credentials: { accessToken: TOKEN },
});
const messenger = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'social_one.native',
  credentials: { accessToken: TOKEN },
});
const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550100' });

beforeEach(() => fake.reset());

/** A WhatsApp contact writes a message the provider stamped `at`; answers the thread. */
async function writesIn(from: string, id: string, at: Date) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = PHONE_ID;
  value.contacts[0].wa_id = from;
  value.messages[0].from = from;
  value.messages[0].id = id;
  value.messages[0].timestamp = String(at.getTime() / 1000);
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
  const m = await waitFor(
    () => ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', id).executeTakeFirst(),
    `message ${id}`,
  );
  return m.thread_id;
}

/** A thread on `connection` whose contact (handle `handle`) last wrote at `lastInboundAt`. */
async function threadOn(connection: { id: number; integrationKey: string }, handle: string, lastInboundAt: Date | null) {
  const contact = await ctx.deps.db
    .insertInto('contacts')
    .values({ workspace_id: tenant.workspace.id, name: 'Customer' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await ctx.deps.db
    .insertInto('contact_handles')
    .values({ workspace_id: tenant.workspace.id, integration_key: connection.integrationKey, external_id: handle, contact_id: contact.id })
    .execute();
  const thread = await ctx.deps.db
    .insertInto('threads')
    .values({
      workspace_id: tenant.workspace.id,
      connection_id: connection.id,
      contact_id: contact.id,
      last_message_preview: 'hi',
      last_inbound_at: lastInboundAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return thread.id;
}

const getThread = async (id: number) =>
  (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}`, headers: tenant.headers })).json().data;

const post = (threadId: number, payload: object) =>
  ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers: { ...tenant.headers, 'content-type': 'application/json' },
    payload,
  });

async function outboundOf(threadId: number) {
  return ctx.deps.db.selectFrom('messages').selectAll().where('thread_id', '=', threadId).where('direction', '=', 'outbound').execute();
}

async function sendJobsOf(messageIds: number[]) {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ANY(${messageIds}::bigint[])`.execute(
    ctx.deps.db,
  );
  return rows[0]!.n;
}

describe('reply windows', () => {
  it('Thread.replyWindowEndsAt: WhatsApp + 24 h, Messenger/Instagram + 7 days, null elsewhere', async () => {
    clock = new Date('2026-03-01T12:00:00.000Z');
    const wrote = new Date('2026-03-01T10:00:00.000Z');
    const wa = await writesIn('15550100001', 'wamid.window-1', wrote);
    expect((await getThread(wa)).replyWindowEndsAt).toBe('2026-03-02T10:00:00.000Z');
    const fb = await threadOn(messenger, 'psid-window-1', wrote);
    expect((await getThread(fb)).replyWindowEndsAt).toBe('2026-03-08T10:00:00.000Z');
    const text = await threadOn(sms, '+14155550111', wrote);
    expect((await getThread(text)).replyWindowEndsAt).toBeNull();
    // A windowed channel whose contact never wrote has no open window.
    const never = await threadOn(whatsapp, '15550100009', null);
    expect((await getThread(never)).replyWindowEndsAt).toBe(new Date(24 * HOUR).toISOString());
  });

  it('replyWindowEndsAt moves with a newer inbound message, never back for an older one', async () => {
    clock = new Date('2026-03-05T12:00:00.000Z');
    const thread = await writesIn('15550100002', 'wamid.window-2a', new Date('2026-03-04T08:00:00.000Z'));
    expect((await getThread(thread)).replyWindowEndsAt).toBe('2026-03-05T08:00:00.000Z');
    expect(await writesIn('15550100002', 'wamid.window-2b', new Date('2026-03-05T11:00:00.000Z'))).toBe(thread);
    expect((await getThread(thread)).replyWindowEndsAt).toBe('2026-03-06T11:00:00.000Z');
    // A late delivery of an earlier message leaves the window where it is.
    await writesIn('15550100002', 'wamid.window-2c', new Date('2026-03-04T09:00:00.000Z'));
    expect((await getThread(thread)).replyWindowEndsAt).toBe('2026-03-06T11:00:00.000Z');
  });

  it('a free-form reply after the window is 422 window_closed, and nothing is stored, queued or sent', async () => {
    clock = new Date('2026-03-10T12:00:00.000Z');
    const thread = await writesIn('15550100003', 'wamid.window-3', new Date('2026-03-09T11:59:00.000Z'));
    const res = await post(thread, { text: 'too late' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('window_closed');
    expect(res.json().error.message).toContain('last wrote at 2026-03-09T11:59:00.000Z');
    expect(res.json().error.message).toContain('send a template');
    expect(await outboundOf(thread)).toEqual([]);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${SEND_QUEUE}`.execute(ctx.deps.db);
    const before = rows[0]!.n;
    // Inside the window the same reply is accepted: the refusal is the window's, nothing else.
    clock = new Date('2026-03-10T11:58:00.000Z');
    const ok = await post(thread, { text: 'just in time' });
    expect(ok.statusCode, ok.body).toBe(202);
    expect(await sendJobsOf([ok.json().data.id])).toBe(1);
    const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${SEND_QUEUE}`.execute(ctx.deps.db);
    expect(after.rows[0]!.n).toBe(before + 1);
    expect((await outboundOf(thread)).map((m) => m.text)).toEqual(['just in time']);
  });

  it('a private note outside the window is accepted', async () => {
    clock = new Date('2026-03-20T12:00:00.000Z');
    const thread = await writesIn('15550100004', 'wamid.window-4', new Date('2026-03-01T12:00:00.000Z'));
    const res = await post(thread, { text: 'called them instead', private: true });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ kind: 'note', private: true, text: 'called them instead' });
  });

  it('Messenger: RESPONSE inside 24 h, HUMAN_AGENT tag up to 7 days, window_closed after', async () => {
    clock = new Date('2026-04-01T12:00:00.000Z');
    const sent = async (threadId: number, text: string) => {
      const res = await post(threadId, { text });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().data.id as number;
      const m = await waitFor(async () => {
        const row = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        return row.status !== 'queued' ? row : undefined;
      }, `message ${id} to leave queued`);
      expect(m.status, m.error ?? '').toBe('sent');
      return fake.requests.find((r) => (r.parsed as { message?: { text?: string } }).message?.text === text)!.parsed;
    };

    const fresh = await threadOn(messenger, 'psid-window-5a', new Date(clock.getTime() - 23 * HOUR));
    expect(await sent(fresh, 'within a day')).toEqual({
      recipient: { id: 'psid-window-5a' },
      messaging_type: 'RESPONSE',
      message: { text: 'within a day' },
    });

    const later = await threadOn(messenger, 'psid-window-5b', new Date(clock.getTime() - 30 * HOUR));
    expect(await sent(later, 'after a day')).toEqual({
      recipient: { id: 'psid-window-5b' },
      messaging_type: 'MESSAGE_TAG',
      tag: 'HUMAN_AGENT',
      message: { text: 'after a day' },
    });

    const gone = await threadOn(messenger, 'psid-window-5c', new Date(clock.getTime() - 7 * 24 * HOUR - 1000));
    const res = await post(gone, { text: 'a week later' });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('window_closed');
    expect(await outboundOf(gone)).toEqual([]);
  });

  it('the fake Send API refuses a message tagged as Meta would refuse it', async () => {
    const send = (body: object) =>
      fetch(`${fake.baseUrls.social}/me/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ recipient: { id: 'psid-x' }, message: { text: 'hi' }, ...body }),
      }).then((r) => r.status);
    expect(await send({ messaging_type: 'RESPONSE' })).toBe(200);
    expect(await send({ messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' })).toBe(200);
    expect(await send({ messaging_type: 'MESSAGE_TAG' })).toBe(400);
    expect(await send({ messaging_type: 'RESPONSE', tag: 'HUMAN_AGENT' })).toBe(400);
    expect(await send({})).toBe(400);
  });

  it('a channel without a window takes a reply whenever the contact last wrote', async () => {
    clock = new Date('2026-05-01T12:00:00.000Z');
    const thread = await threadOn(sms, '+14155550112', new Date('2025-01-01T00:00:00.000Z'));
    const res = await post(thread, { text: 'months later' });
    expect(res.statusCode, res.body).toBe(202);
  });
});
