import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeProviders, type Provider, startFakeProviders } from '../../harness/fake-providers.js';
import type { SendCredentials, SendOutcome, SendTarget } from '../../src/channels/channel.js';
import { adapters, sendersWith } from '../../src/channels/index.js';
import { retryAfterSeconds } from '../../src/channels/provider-http.js';
import { closedPort } from '../helpers/sockets.js';

const TOKEN = 'EAAGm0PX4ZCpsBAsecret-token-1f2e3d4c5b6a';
const SID = 'AC0123456789abcdef0123456789abcdef';
const TELEGRAM_TOKEN = '7512345678:AAH-telegram-bot-token';
const OPTIONS = { timeoutMs: 5_000 };

let fake: FakeProviders;
beforeAll(async () => {
  fake = await startFakeProviders();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

interface Case {
  key: 'whatsapp' | 'social_one.native' | 'social_two.native' | 'aggregator' | 'whatsapp_session' | 'sms';
  provider: Provider;
  target: SendTarget;
  credentials: () => SendCredentials;
  /** Credentials that lack what the channel needs, and the names the error gives. */
  incomplete: SendCredentials;
  missing: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  /** The message id in the provider's success answer. */
  // biome-ignore lint/suspicious/noExplicitAny: each provider's answer has its own shape, read by its own case
  idOf(answer: any): string;
  /** The error text of the provider's 400 answer. */
  badRequest: string;
}

const basic = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;

const cases: Case[] = [
  {
    key: 'whatsapp',
    provider: 'whatsapp',
    target: { accountId: '106540352242922', to: '4915112345678', text: 'Your order has shipped.', messageId: 1 },
    credentials: () => ({ apiBaseUrl: fake.baseUrls.whatsapp, accessToken: TOKEN }),
    incomplete: { apiBaseUrl: 'http://127.0.0.1:9' },
    missing: 'accessToken',
    path: '/graph/v23.0/106540352242922/messages',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '4915112345678',
      type: 'text',
      text: { body: 'Your order has shipped.' },
    },
    idOf: (a) => a.messages[0].id,
    badRequest: '(#131030) Recipient phone number not in allowed list',
  },
  ...(['social_one.native', 'social_two.native'] as const).map(
    (key): Case => ({
      key,
      provider: 'social',
      target: { accountId: '1126357274156702', to: '6774138815947562', text: 'Yes, 10 to 4.', messageId: 1 },
      credentials: () => ({ apiBaseUrl: fake.baseUrls.social, accessToken: TOKEN }),
      incomplete: {},
      missing: 'accessToken',
      path: '/graph/v23.0/me/messages',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: { recipient: { id: '6774138815947562' }, messaging_type: 'RESPONSE', message: { text: 'Yes, 10 to 4.' } },
      idOf: (a) => a.message_id,
      badRequest: '(#100) No matching user found',
    }),
  ),
  {
    key: 'aggregator',
    provider: 'aggregator',
    target: { accountId: 'agg-acct-7781', to: '+4915112345678', text: 'Thanks, Jonas!', messageId: 1 },
    credentials: () => ({ apiBaseUrl: fake.baseUrls.aggregator, accessToken: TOKEN }),
    incomplete: { accessToken: TOKEN },
    missing: 'apiBaseUrl',
    path: '/aggregator/messages',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: { accountId: 'agg-acct-7781', to: '+4915112345678', text: 'Thanks, Jonas!' },
    idOf: (a) => a.id,
    badRequest: 'Recipient is not reachable on this account',
  },
  {
    key: 'whatsapp_session',
    provider: 'whatsapp_session',
    target: { accountId: 'acme-main', to: '4915112345678', text: 'On my way', messageId: 1 },
    credentials: () => ({ apiBaseUrl: fake.baseUrls.whatsapp_session, accessToken: TOKEN }),
    incomplete: { accessToken: TOKEN },
    missing: 'apiBaseUrl',
    path: '/waha/api/sendText',
    headers: { 'x-api-key': TOKEN, 'content-type': 'application/json' },
    body: { session: 'acme-main', chatId: '4915112345678@c.us', text: 'On my way' },
    idOf: (a) => a.id._serialized,
    badRequest: 'chatId must be a valid WhatsApp id',
  },
  {
    key: 'sms',
    provider: 'sms',
    target: { accountId: '+15005550006', to: '+4915112345678', text: 'Your code is 1234', messageId: 1 },
    credentials: () => ({ apiBaseUrl: fake.baseUrls.sms, accessToken: TOKEN, accountSid: SID }),
    incomplete: { accessToken: TOKEN },
    missing: 'accountSid',
    path: `/twilio/2010-04-01/Accounts/${SID}/Messages.json`,
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: { To: '+4915112345678', From: '+15005550006', Body: 'Your code is 1234' },
    idOf: (a) => a.sid,
    badRequest: "The 'To' number is not a valid phone number.",
  },
];

/** Sends through the adapter; every error text is checked for the credential on the way. */
async function send(c: Case, credentials = c.credentials(), options = OPTIONS): Promise<SendOutcome> {
  const send = adapters[c.key].send;
  if (!send) throw new Error(`${c.key} has no send`);
  const outcome = await send(c.target, credentials, options);
  if (outcome.outcome !== 'sent') {
    expect(outcome.error).not.toContain(TOKEN);
    expect(outcome.error).not.toContain(basic.slice('Basic '.length));
    expect(outcome.error.length).toBeLessThanOrEqual(1000);
  }
  return outcome;
}

describe.each(cases)('$key send', (c) => {
  it('sends the documented request and returns the provider id', async () => {
    const outcome = await send(c);
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(c.path);
    expect(req.headers).toMatchObject(c.headers);
    expect(req.parsed).toEqual(c.body);
    const id = c.idOf(req.response?.body);
    expect(id).toEqual(expect.any(String));
    expect(outcome).toEqual({ outcome: 'sent', externalId: id });
  });

  it("400 → failed with the provider's own message", async () => {
    fake.behave(c.path, 'bad-request');
    expect(await send(c)).toEqual({ outcome: 'failed', error: c.badRequest });
  });

  it('429 → retry with retry-after in seconds', async () => {
    fake.behave(c.path, 'rate-limited');
    expect(await send(c)).toEqual({ outcome: 'retry', error: 'HTTP 429: Too many requests', retryAfterSeconds: 7 });
  });

  it('500 → retry', async () => {
    fake.behave(c.path, 'server-error');
    expect(await send(c)).toEqual({ outcome: 'retry', error: 'HTTP 500: Internal server error' });
  });

  it('no answer → retry once the timeout has passed, not later', async () => {
    fake.behave(c.path, 'hang');
    const started = Date.now();
    const outcome = await send(c, c.credentials(), { timeoutMs: 200 });
    expect(outcome).toEqual({ outcome: 'retry', error: `${c.key}: no answer within 200 ms` });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('missing credentials → failed naming them, and nothing is sent', async () => {
    const outcome = await send(c, c.incomplete);
    expect(outcome).toEqual({
      outcome: 'failed',
      error: expect.stringContaining(`no credentials (${c.missing} missing): set them with PATCH /v1/connections/:id`),
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('a credential the provider echoes is cut out of the error text', async () => {
    // The echo carries the credential as sent: the bare token and the whole auth header.
    fake.behave(c.path, {
      status: 401,
      body: { error: { message: `Invalid access token ${TOKEN} (${c.headers.authorization ?? c.headers['x-api-key']})` } },
    });
    const outcome = await send(c);
    expect(outcome).toEqual({ outcome: 'failed', error: expect.stringContaining('Invalid access token [redacted]') });
  });
});

describe('the shared HTTP sender (through whatsapp)', () => {
  const c = cases[0]!;

  it('honours retry-after given as an HTTP-date', async () => {
    fake.behave(c.path, { rateLimited: new Date(Date.now() + 120_000).toUTCString() });
    const outcome = await send(c);
    expect(outcome.outcome).toBe('retry');
    expect(outcome.outcome === 'retry' && outcome.retryAfterSeconds).toBeGreaterThanOrEqual(118);
    expect(outcome.outcome === 'retry' && outcome.retryAfterSeconds).toBeLessThanOrEqual(120);
  });

  it("honours the wait Telegram's flood control names in its body (parameters.retry_after, no header)", async () => {
    const path = `/telegram/bot${TELEGRAM_TOKEN}/sendMessage`;
    fake.behave(path, {
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3000', parameters: { retry_after: 3000 } },
    });
    const outcome = await adapters.telegram.send!(
      { accountId: '7512345678', to: '123456789', text: 'hello', messageId: 1 },
      { apiBaseUrl: fake.baseUrls.telegram, accessToken: TELEGRAM_TOKEN },
      OPTIONS,
    );
    expect(outcome).toEqual({ outcome: 'retry', error: 'HTTP 429: Too Many Requests: retry after 3000', retryAfterSeconds: 3000 });
    expect(fake.requests.map((r) => r.path)).toEqual([path]);
  });

  it("Meta's rate limits, answered as 400s (131056: too many to one person), are retried; its other 400s fail", async () => {
    for (const meta of [cases[0]!, cases[1]!]) {
      fake.behave(meta.path, {
        status: 400,
        body: {
          error: { message: '(#131056) (Business Account, Consumer Account) pair rate limit hit', type: 'OAuthException', code: 131056 },
        },
      });
      expect(await send(meta)).toEqual({
        outcome: 'retry',
        error: 'HTTP 400: (#131056) (Business Account, Consumer Account) pair rate limit hit',
      });
      fake.behave(meta.path, {
        status: 400,
        body: { error: { message: '(#613) Calls to this api have exceeded the rate limit.', code: 613 } },
      });
      expect((await send(meta)).outcome).toBe('retry');
      fake.behave(meta.path, { status: 400, body: { error: { message: '(#100) Invalid parameter', code: 100 } } });
      expect(await send(meta)).toEqual({ outcome: 'failed', error: '(#100) Invalid parameter' });
    }
    // Another provider's own code 4 is no Meta rate limit.
    const sms = cases.find((x) => x.key === 'sms')!;
    fake.behave(sms.path, { status: 400, body: { error: { message: 'no', code: 4 } } });
    expect((await send(sms)).outcome).toBe('failed');
  });

  it('408 and 503 → retry; other 4xx → failed, with HTTP <status> when the body says nothing', async () => {
    fake.behave(c.path, { status: 408, body: 'Request Timeout' });
    expect(await send(c)).toEqual({ outcome: 'retry', error: 'HTTP 408' });
    fake.behave(c.path, { status: 503, headers: { 'retry-after': '30' } });
    expect(await send(c)).toEqual({ outcome: 'retry', error: 'HTTP 503', retryAfterSeconds: 30 });
    fake.behave(c.path, { status: 404, body: '<html>Not Found</html>' });
    expect(await send(c)).toEqual({ outcome: 'failed', error: 'HTTP 404' });
  });

  it('a 2xx without the id → failed, never a made-up id', async () => {
    fake.behave(c.path, { status: 200, body: { messaging_product: 'whatsapp', messages: [] } });
    expect(await send(c)).toEqual({ outcome: 'failed', error: 'whatsapp answered HTTP 200 without a message id (messages[0].id)' });
    fake.behave(c.path, { status: 200, body: 'OK' });
    expect((await send(c)).outcome).toBe('failed');
  });

  it('does not follow a redirect (the token would go with it)', async () => {
    fake.behave(c.path, { status: 307, headers: { location: `${fake.url}/elsewhere` } });
    expect(await send(c)).toEqual({ outcome: 'failed', error: 'whatsapp answered HTTP 307, a redirect (not followed): check apiBaseUrl' });
    expect(fake.requests.map((r) => r.path)).toEqual([c.path]);
  });

  it('a refused connection → retry', async () => {
    const closed = await closedPort();
    const outcome = await send(c, { apiBaseUrl: `http://127.0.0.1:${closed}`, accessToken: TOKEN });
    expect(outcome).toEqual({ outcome: 'retry', error: expect.stringMatching(/^whatsapp: network error: .*ECONNREFUSED/) });
  });

  it('an apiBaseUrl that is not an http(s) URL → failed', async () => {
    expect((await send(c, { apiBaseUrl: 'not a url', accessToken: TOKEN })).outcome).toBe('failed');
    expect(await send(c, { apiBaseUrl: 'ftp://example.org', accessToken: TOKEN })).toEqual({
      outcome: 'failed',
      error: 'whatsapp: apiBaseUrl must be an http(s) URL',
    });
  });

  it("keeps at most 1,000 characters of the provider's message", async () => {
    fake.behave(c.path, { status: 400, body: { error: { message: 'x'.repeat(5_000) } } });
    expect(await send(c)).toEqual({ outcome: 'failed', error: 'x'.repeat(1_000) });
  });

  it('reads at most 256 KiB of an answer (an oversized body is no message)', async () => {
    fake.behave(c.path, { status: 400, body: { error: { message: 'x'.repeat(300 * 1024) } } });
    expect(await send(c)).toEqual({ outcome: 'failed', error: 'HTTP 400' });
  });

  it('tolerates a trailing slash on apiBaseUrl', async () => {
    expect((await send(c, { apiBaseUrl: `${fake.baseUrls.whatsapp}/`, accessToken: TOKEN })).outcome).toBe('sent');
    expect(fake.requests[0]?.path).toBe(c.path);
  });

  it('retryAfterSeconds reads delta-seconds and HTTP-dates, and nothing else', () => {
    const now = Date.parse('2026-11-20T09:15:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds(' 0 ', now)).toBe(0);
    expect(retryAfterSeconds('Fri, 20 Nov 2026 09:16:00 GMT', now)).toBe(60);
    expect(retryAfterSeconds('Fri, 20 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
  });
});

describe('whatsapp_session ids and chats', () => {
  const c = cases.find((x) => x.key === 'whatsapp_session')!;
  it('takes the id when the gateway gives it as a string', async () => {
    fake.behave(c.path, { status: 201, body: { id: 'true_4915112345678@c.us_3EB0C767D26A1D5E1F1A' } });
    expect(await send(c)).toEqual({ outcome: 'sent', externalId: 'true_4915112345678@c.us_3EB0C767D26A1D5E1F1A' });
  });
  it('sends to a handle that already names a chat as it is', async () => {
    await send({ ...c, target: { ...c.target, to: '120363025246125486@g.us' } });
    expect(fake.requests[0]?.parsed).toMatchObject({ chatId: '120363025246125486@g.us' });
  });
  it('sends without X-Api-Key when the gateway runs without one', async () => {
    expect((await send(c, { apiBaseUrl: fake.baseUrls.whatsapp_session })).outcome).toBe('sent');
    expect(fake.requests[0]?.headers['x-api-key']).toBeUndefined();
  });
});

describe('channels that do not send', () => {
  it('ai has no send (the route answers 422)', () => {
    expect(adapters.ai.send).toBeUndefined();
  });
});

describe('livechat', () => {
  const target = { accountId: 'wk_shop', to: 'visitor-handle', text: 'Hello!', messageId: 42 };
  it('hands the reply to the visitor bus; its provider id is its own message id', async () => {
    const offered: unknown[] = [];
    const sender = sendersWith({ visitors: { offer: async (r) => void offered.push(r) } })('livechat')!;
    const outcome = await sender.send!(target, {}, { timeoutMs: 1000 });
    expect(outcome).toEqual({ outcome: 'sent', externalId: '42' });
    expect(offered).toEqual([{ visitor: 'visitor-handle', messageId: 42 }]);
  });

  it('sends only through an adapter built with a bus: the webhook registry’s cannot send', () => {
    expect(adapters.livechat.send).toBeUndefined();
    expect(sendersWith({ visitors: { offer: async () => {} } })('whatsapp')).toBe(adapters.whatsapp);
  });
});
