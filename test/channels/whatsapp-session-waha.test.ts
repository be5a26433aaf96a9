import { createHmac } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { adapters } from '../../src/channels/index.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

const HMAC_KEY = 'waha-hmac-key-0123456789abcdef';
const API_KEY = 'waha-api-key-0123456789';
const SESSION = 'default';
const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      'whatsapp_session.waha': { webhookSecret: HMAC_KEY, apiBaseUrl: fake.baseUrls.whatsapp_session, accessToken: API_KEY },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const session = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp_session.waha',
  externalAccountId: SESSION,
});
beforeEach(() => fake.reset());

/** WAHA's headers for a body: hex HMAC-SHA512 with the session's HMAC key (computed here with node:crypto). */
const wahaHeaders = (body: string, key = HMAC_KEY) => ({
  'x-webhook-hmac': createHmac('sha512', key).update(body, 'utf8').digest('hex'),
  'x-webhook-hmac-algorithm': 'sha512',
});

const post = (body: string, headers: Record<string, string>) =>
  ctx.app.inject({
    method: 'POST',
    url: '/webhooks/whatsapp_session.waha',
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });

const rowCount = async () =>
  (await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('integration_key', '=', 'whatsapp_session.waha').execute()).length;

const messageBy = (externalId: string) =>
  waitFor(
    () => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(),
    `message ${externalId}`,
  );

/** A fixture with its message id (and optionally sender) replaced. */
function withId(name: string, id: string, from?: string): string {
  const body = JSON.parse(fixture('whatsapp_session.waha', name));
  body.payload.id = id;
  if (from) body.payload.from = from;
  return JSON.stringify(body);
}

describe('whatsapp_session.waha: verification', () => {
  it('accepts X-Webhook-Hmac (hex HMAC-SHA512 of the raw body) with algorithm sha512, and answers {"status":"queued"}', async () => {
    const body = withId('message.json', 'false_1@c.us_VERIFY1');
    const res = await post(body, wahaHeaders(body));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toBe('{"status":"queued"}');
    // Uppercase hex is the same digest.
    const upper = wahaHeaders(body);
    expect((await post(body, { ...upper, 'x-webhook-hmac': upper['x-webhook-hmac'].toUpperCase() })).statusCode).toBe(200);
  });

  it("refuses a wrong key, a missing or other algorithm, SHA-256 digests and the sibling key's headers; nothing is stored", async () => {
    const body = withId('message.json', 'false_1@c.us_VERIFY2');
    const right = wahaHeaders(body);
    const before = await rowCount();
    for (const headers of [
      {},
      wahaHeaders(body, 'another-hmac-key-0123456789'),
      { 'x-webhook-hmac': right['x-webhook-hmac'] },
      { ...right, 'x-webhook-hmac-algorithm': 'sha256' },
      { 'x-webhook-hmac': sign(HMAC_KEY, body), 'x-webhook-hmac-algorithm': 'sha256' },
      { 'x-webhook-hmac': sign(HMAC_KEY, body), 'x-webhook-hmac-algorithm': 'sha512' },
      { 'x-webhook-signature': sign(HMAC_KEY, body) },
      { 'x-signature': `sha256=${sign(HMAC_KEY, body)}` },
      { ...right, 'x-webhook-hmac': `${right['x-webhook-hmac']}00` },
    ]) {
      const res = await post(body, headers as Record<string, string>);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_api_key');
    }
    // A body changed after signing.
    expect((await post(body.replace('Hi there!', 'Hi there?'), right)).statusCode).toBe(401);
    expect(await rowCount()).toBe(before);
  });

  it('refuses everything while webhookSecret is unset', async () => {
    const body = withId('message.json', 'false_1@c.us_VERIFY3');
    const v = await adapters['whatsapp_session.waha'].verify(
      { text: body, bytes: Buffer.from(body) },
      wahaHeaders(body),
      {},
      {
        isKnownOutboundMessage: async () => false,
      },
    );
    expect(v.ok).toBe(false);
  });
});

describe('whatsapp_session.waha: events', () => {
  it('a message opens a thread on the session for the sender, named by notifyName', async () => {
    const body = withId('message.json', 'false_11111111111@c.us_IN1');
    expect((await post(body, wahaHeaders(body))).statusCode).toBe(200);
    const message = await messageBy('false_11111111111@c.us_IN1');
    expect(message).toMatchObject({ connection_id: session.id, direction: 'inbound', text: 'Hi there!' });
  });

  it('normalises like the sibling key: handle without @c.us or @s.whatsapp.net, own messages skipped, media as attachments', () => {
    const normalise = (payload: unknown) => adapters['whatsapp_session.waha'].normalise(payload, { verification: 'signed' });
    expect(normalise(JSON.parse(fixture('whatsapp_session.waha', 'message.json')))).toEqual([
      {
        type: 'message',
        externalAccountId: 'default',
        externalMessageId: 'false_11111111111@c.us_AAAAAAAAAAAAAAAAAAAA',
        contact: { externalId: '11111111111', name: 'MyName' },
        text: 'Hi there!',
        occurredAt: new Date(1666943582000),
      },
    ]);
    expect(normalise(JSON.parse(fixture('whatsapp_session.waha', 'message-image.json')))[0]).toMatchObject({
      text: 'Look at this',
      attachments: [
        {
          kind: 'image',
          contentType: 'image/jpeg',
          source: {
            from: 'url',
            url: 'http://localhost:3000/api/files/default/false_11111111111@c.us_BBBBBBBBBBBBBBBBBBBB.jpeg',
            auth: 'api_key',
          },
        },
      ],
    });
    // A medium WAHA did not download (no media.url) stays a placeholder before the caption.
    const undownloaded = JSON.parse(fixture('whatsapp_session.waha', 'message-image.json'));
    undownloaded.payload.media = { url: null, mimetype: 'image/jpeg', error: 'download failed' };
    expect(normalise(undownloaded)[0]).toMatchObject({ text: '[image] Look at this' });
    expect(normalise(undownloaded)[0]).not.toHaveProperty('attachments');
    const noweb = JSON.parse(fixture('whatsapp_session.waha', 'message.json'));
    noweb.payload.from = '11111111111@s.whatsapp.net';
    noweb.payload._data = { pushName: 'Pushed' };
    expect(normalise(noweb)[0]).toMatchObject({ contact: { externalId: '11111111111', name: 'Pushed' } });
    const own = JSON.parse(fixture('whatsapp_session.waha', 'message.json'));
    own.payload.fromMe = true;
    expect(normalise(own)).toEqual([]);
    expect(normalise({ event: 'session.status', session: 'default', payload: { status: 'WORKING' } })).toEqual([]);
    expect(() => normalise({ event: 'message.ack', session: 'default', payload: { id: 'x' } })).toThrow(/ack/);
    const ack = (value: unknown) => normalise({ event: 'message.ack', session: 'default', payload: { id: 'x', ack: value } });
    expect(ack(0)).toEqual([]);
    expect(ack('constructor')).toEqual([]);
    expect(ack(-1)[0]).toMatchObject({ status: 'failed', error: expect.stringContaining('ERROR') });
  });

  it("skips a contact's status update (from status@broadcast): the delivery is processed, no thread is opened", async () => {
    const body = withId('message.json', 'false_status@broadcast_STORY1_11111111111@c.us', 'status@broadcast');
    const parsed = JSON.parse(body);
    parsed.payload.participant = '11111111111@c.us';
    const story = JSON.stringify(parsed);
    expect((await post(story, wahaHeaders(story))).statusCode).toBe(200);
    const row = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('webhook_inbox')
          .select(['status', 'last_error'])
          .where('raw_body', '=', story)
          .where('status', '!=', 'received')
          .executeTakeFirst(),
      'the status update processed',
    );
    expect(row).toEqual({ status: 'processed', last_error: null });
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', 'like', '%STORY1%').execute()).toEqual([]);
    expect(await ctx.deps.db.selectFrom('contact_handles').select('contact_id').where('external_id', 'like', 'status%').execute()).toEqual(
      [],
    );
  });

  it('message.ack moves a sent message to read', async () => {
    const sent = await makeOutboundMessage(ctx.deps, session, 'true_11111111111@c.us_CCCCCCCCCCCCCCCCCCCC');
    const body = fixture('whatsapp_session.waha', 'ack.json');
    expect((await post(body, wahaHeaders(body))).statusCode).toBe(200);
    await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
      return m.status === 'read';
    }, 'the ack');
  });

  it("replies go through WAHA's /api/sendText with X-Api-Key, to the sender's chat", async () => {
    const body = withId('message.json', 'false_33333333333@c.us_IN2', '33333333333@c.us');
    expect((await post(body, wahaHeaders(body))).statusCode).toBe(200);
    const { thread_id } = await messageBy('false_33333333333@c.us_IN2');
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread_id}/messages`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { text: 'Hello from the inbox' },
    });
    expect(res.statusCode, res.body).toBe(202);
    const sent = await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).executeTakeFirstOrThrow();
      return m.status === 'queued' ? undefined : m;
    }, 'the reply');
    expect(sent.status).toBe('sent');
    const request = fake.requests.at(-1)!;
    expect(request.path).toBe('/waha/api/sendText');
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(request.parsed).toEqual({ session: SESSION, chatId: '33333333333@c.us', text: 'Hello from the inbox' });
  });
});
