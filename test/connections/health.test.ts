import { createHmac, randomBytes } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { SMTP_UNREACHABLE } from '../../src/net/smtp.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

const PUBLIC_URL = 'https://inbox.example.test';
const fake = await startFakeProviders();
const smtp = await startSmtpServer({ auth: { user: 'mailer', pass: 'smtp-password-0123456789' } });
afterAll(async () => {
  await fake.close();
  await smtp.close();
});
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: PUBLIC_URL,
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { apiBaseUrl: fake.baseUrls.whatsapp },
      'sms.twilio': { apiBaseUrl: fake.baseUrls.sms },
      telegram: { apiBaseUrl: fake.baseUrls.telegram },
      'whatsapp_session.waha': { apiBaseUrl: fake.baseUrls.whatsapp_session },
    }),
  },
});
beforeEach(() => fake.reset());

const unique = () => randomBytes(4).toString('hex');
const digits = () => String(100_000_000 + Math.floor(Math.random() * 899_999_999));
const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

interface Connection {
  id: number;
  externalAccountId: string;
  webhookUrl: string;
  lastDeliveryAt: string | null;
  lastErrorAt: string | null;
  lastError: string | null;
}

async function connect(headers: Record<string, string>, body: Record<string, unknown>): Promise<Connection> {
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/connections', headers: json(headers), payload: { name: 'Line', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
const listed = async (headers: Record<string, string>, id: number) =>
  ((await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers })).json().data as Connection[]).find((c) => c.id === id);
const check = (headers: Record<string, string>, id: number) =>
  ctx.app.inject({ method: 'POST', url: `/v1/connections/${id}/check`, headers: json(headers), payload: {} });
const pathOf = (c: Connection) => c.webhookUrl.slice(PUBLIC_URL.length);

/** A WhatsApp Cloud text message to the connection, posted on its own URL, signed with its own secret. */
async function deliverText(c: Connection, secret: string, text = 'hello') {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = c.externalAccountId;
  value.messages[0].id = `wamid.${unique()}${unique()}`;
  value.messages[0].text.body = text;
  value.messages[0].timestamp = String(Math.floor(Date.now() / 1000)); // inside the reply window
  const body = JSON.stringify(payload);
  const res = await ctx.app.inject({
    method: 'POST',
    url: pathOf(c),
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(secret, body)}` },
    payload: body,
  });
  return { res, externalId: value.messages[0].id as string };
}
const threadOf = (externalId: string) =>
  waitFor(
    () => ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', externalId).executeTakeFirst(),
    `message ${externalId}`,
  );

describe('Connection health', () => {
  it('records lastDeliveryAt when a delivery is applied, and lastError when one on its URL fails', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    const c = await connect(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: secret },
    });
    expect([c.lastDeliveryAt, c.lastErrorAt, c.lastError]).toEqual([null, null, null]);
    const { res } = await deliverText(c, secret);
    expect(res.statusCode).toBe(200);
    const delivered = await waitFor(async () => (await listed(tenant.headers, c.id))?.lastDeliveryAt, 'lastDeliveryAt');
    expect(Date.parse(delivered)).toBeGreaterThan(Date.now() - 60_000);

    // Validly signed, but not JSON: stored, then failed by the worker with its reason (WAHA
    // verifies the bytes; whatsapp would refuse it at once, SPEC §5.2 rule 3).
    const body = 'this is not json';
    const waha = `waha-secret-${unique()}`;
    const session = `s-${unique()}`;
    const gateway = await connect(tenant.headers, {
      integrationKey: 'whatsapp_session.waha',
      externalAccountId: session,
      webhookSecrets: { webhookSecret: waha },
    });
    const stored = await ctx.app.inject({
      method: 'POST',
      url: pathOf(gateway),
      headers: {
        'content-type': 'application/json',
        'x-webhook-hmac': createHmac('sha512', waha).update(body).digest('hex'),
        'x-webhook-hmac-algorithm': 'sha512',
      },
      payload: body,
    });
    expect(stored.statusCode, stored.body).toBe(200);
    const failed = await waitFor(async () => {
      const now = await listed(tenant.headers, gateway.id);
      return now?.lastError ? now : undefined;
    }, 'lastError');
    expect(failed.lastError).toContain('not valid JSON');
    expect(failed.lastErrorAt).not.toBeNull();
    // Its connection was known from its URL: the row is the workspace's, to see and requeue.
    const rows = await ctx.app.inject({ method: 'GET', url: '/v1/admin/webhook-inbox?status=failed', headers: tenant.headers });
    expect(rows.json().data).toEqual([expect.objectContaining({ integrationKey: 'whatsapp_session.waha', appId: tenant.workspace.appId })]);
    const id = rows.json().data[0].id as string;
    const requeued = await ctx.app.inject({ method: 'POST', url: `/v1/admin/webhook-inbox/${id}/requeue`, headers: tenant.headers });
    expect(requeued.json().data).toEqual({ id, status: 'failed' });
  });

  it('says so when every delivery on its URL names another account (a mistyped account id), never "delivered"', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    // The display number typed where Meta's phone number id belongs: Meta names the id.
    const c = await connect(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: '15550783881',
      webhookSecrets: { webhookSecret: secret },
    });
    const phoneNumberId = digits();
    const { res, externalId } = await deliverText({ ...c, externalAccountId: phoneNumberId }, secret);
    expect(res.statusCode).toBe(200);
    const now = await waitFor(async () => {
      const seen = await listed(tenant.headers, c.id);
      return seen?.lastError ? seen : undefined;
    }, 'lastError');
    expect(now.lastError).toBe(
      `events for whatsapp account "${phoneNumberId}" arrived on this connection's URL and were dropped: this connection's account is "15550783881"`,
    );
    expect(now.lastDeliveryAt).toBeNull();
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', externalId).executeTakeFirst()).toBeUndefined();
  });

  it('records a send that failed: a workspace connection without credentials fails at once', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    const c = await connect(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: secret },
    });
    const { externalId } = await deliverText(c, secret);
    const { thread_id } = await threadOf(externalId);
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread_id}/messages`,
      headers: json(tenant.headers),
      payload: { text: 'thanks' },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    const failed = await waitFor(async () => {
      const now = await listed(tenant.headers, c.id);
      return now?.lastError ? now : undefined;
    }, 'lastError');
    expect(failed.lastError).toBe('connection has no credentials');
    expect(fake.requests.filter((r) => r.provider === 'whatsapp')).toEqual([]);
  });
});

describe('POST /v1/connections/:id/check', () => {
  it("calls each provider's cheapest authenticated read with the connection's credentials", async () => {
    const tenant = await makeTenant(ctx.deps);
    const phone = digits();
    const token = `EAAG-${unique()}-token`;
    const wa = await connect(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: phone, credentials: { accessToken: token } });
    let res = await check(tenant.headers, wa.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ ok: true, message: expect.stringContaining('+1 555 078 3881') });
    const graph = fake.requests.at(-1)!;
    expect([graph.method, graph.path, graph.headers.authorization]).toEqual(['GET', `/graph/v23.0/${phone}`, `Bearer ${token}`]);

    const sid = `AC${unique()}${unique()}`;
    const twilioToken = `twilio-${unique()}`;
    const sms = await connect(tenant.headers, {
      integrationKey: 'sms.twilio',
      externalAccountId: `+1555${digits()}`.slice(0, 12),
      credentials: { accountSid: sid, accessToken: twilioToken },
    });
    res = await check(tenant.headers, sms.id);
    expect(res.json().data.ok, res.body).toBe(true);
    const twilioRead = fake.requests.at(-1)!;
    expect(twilioRead.path).toBe(`/twilio/2010-04-01/Accounts/${sid}.json`);
    expect(twilioRead.headers.authorization).toBe(`Basic ${Buffer.from(`${sid}:${twilioToken}`).toString('base64')}`);

    const botId = digits();
    const bot = await connect(tenant.headers, {
      integrationKey: 'telegram',
      externalAccountId: botId,
      credentials: { accessToken: `${botId}:AAH${unique()}` },
    });
    res = await check(tenant.headers, bot.id);
    expect(res.json().data).toEqual({ ok: true, message: 'Telegram knows the bot @fake_inbox_bot' });
    expect(fake.requests.at(-1)!.path).toMatch(/^\/telegram\/bot[0-9]+:AAH[0-9a-f]+\/getMe$/);

    const session = `s-${unique()}`;
    const waha = await connect(tenant.headers, {
      integrationKey: 'whatsapp_session.waha',
      externalAccountId: session,
      webhookSecrets: { webhookSecret: `waha-${unique()}` },
      credentials: { accessToken: 'waha-api-key' },
    });
    res = await check(tenant.headers, waha.id);
    expect(res.json().data).toEqual({ ok: true, message: `the gateway's session ${session} is WORKING` });
    expect(fake.requests.at(-1)!.headers['x-api-key']).toBe('waha-api-key');

    const mail = await connect(tenant.headers, {
      integrationKey: 'email.postmark',
      externalAccountId: `support-${unique()}@example.test`,
      credentials: { smtpUrl: smtp.url },
    });
    res = await check(tenant.headers, mail.id);
    expect(res.json().data.ok, res.body).toBe(true);
    const wrong = await connect(tenant.headers, {
      integrationKey: 'email.postmark',
      externalAccountId: `support-${unique()}@example.test`,
      credentials: { smtpUrl: smtp.url.replace('smtp-password-0123456789', 'wrong-password-987') },
    });
    res = await check(tenant.headers, wrong.id);
    expect(res.json().data.ok).toBe(false);
    expect(res.body).not.toContain('wrong-password-987');
  });

  it('says what is wrong: refused credentials (never echoed), none at all, an unreachable provider', async () => {
    const tenant = await makeTenant(ctx.deps);
    const phone = digits();
    const token = `EAAG-${unique()}-refused`;
    const wa = await connect(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: phone, credentials: { accessToken: token } });
    fake.behave(`/graph/v23.0/${phone}`, { status: 401, body: { error: { message: `Invalid OAuth access token ${token}`, code: 190 } } });
    let res = await check(tenant.headers, wa.id);
    expect(res.json().data.ok).toBe(false);
    expect(res.json().data.message).toContain('HTTP 401 (the credentials were refused): Invalid OAuth access token');
    expect(res.body).not.toContain(token);

    const bare = await connect(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: digits() });
    const before = fake.requests.length;
    res = await check(tenant.headers, bare.id);
    expect(res.json().data).toEqual({ ok: false, message: expect.stringContaining('connection has no credentials') });
    expect(fake.requests.length).toBe(before);

    const reader = await issueApiKey(ctx.deps.db, tenant.workspace.id, 'reader', ['read', 'write']);
    expect((await check({ 'x-api-key': reader.key }, wa.id)).statusCode).toBe(403);
    const stranger = await makeTenant(ctx.deps);
    expect((await check(stranger.headers, wa.id)).statusCode).toBe(404);
  });
  it('reports an SMTP server it could not reach as such, without the words of whatever answered', async () => {
    // Something on the smtpUrl's port that is not SMTP: its banner would say what listens there.
    const banner = 'SSH-2.0-OpenSSH_9.6 build-box-internal';
    const server = createServer((s) => s.end(`${banner}\r\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const tenant = await makeTenant(ctx.deps);
      const port = (server.address() as AddressInfo).port;
      const mail = await connect(tenant.headers, {
        integrationKey: 'email.postmark',
        externalAccountId: `support-${unique()}@example.test`,
        credentials: { smtpUrl: `smtp://mailer:pw@127.0.0.1:${port}` },
      });
      const res = await check(tenant.headers, mail.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ ok: false, message: `email: ${SMTP_UNREACHABLE}` });
      // Nothing listening at all reads the same.
      const closed = await connect(tenant.headers, {
        integrationKey: 'email.postmark',
        externalAccountId: `support-${unique()}@example.test`,
        credentials: { smtpUrl: 'smtp://mailer:pw@127.0.0.1:1' },
      });
      expect((await check(tenant.headers, closed.id)).json().data).toEqual({ ok: false, message: `email: ${SMTP_UNREACHABLE}` });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('DELETE /v1/connections/:id', () => {
  it('stops its URL (404) and keeps its threads, read-only; the account can be connected again', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    const phone = digits();
    const c = await connect(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: phone,
      webhookSecrets: { webhookSecret: secret },
    });
    const { externalId } = await deliverText(c, secret, 'before deletion');
    const { thread_id } = await threadOf(externalId);

    const reader = await issueApiKey(ctx.deps.db, tenant.workspace.id, 'writer', ['read', 'write']);
    expect(
      (await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${c.id}`, headers: { 'x-api-key': reader.key } })).statusCode,
    ).toBe(403);
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${c.id}`, headers: tenant.headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${c.id}`, headers: tenant.headers })).statusCode).toBe(404);

    expect((await deliverText(c, secret, 'after deletion')).res.statusCode).toBe(404);
    expect(await listed(tenant.headers, c.id)).toBeUndefined();
    const thread = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${thread_id}/messages`, headers: tenant.headers });
    expect(thread.statusCode).toBe(200);
    expect(thread.json().data.map((m: { text: string }) => m.text)).toContain('before deletion');
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread_id}/messages`,
      headers: json(tenant.headers),
      payload: { text: 'anyone there?' },
    });
    expect(reply.statusCode, reply.body).toBe(409);
    expect(reply.json().error.message).toContain('connection was deleted');

    const again = await connect(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: phone });
    expect(again.id).not.toBe(c.id);
  });
});
