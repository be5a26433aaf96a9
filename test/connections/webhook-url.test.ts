import { createHash, createHmac, randomBytes } from 'node:crypto';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { setTelegramSecretHash } from '../../src/connections/telegram-webhook.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

// Twilio's own SDK computes the Twilio signatures: an oracle independent of the service.
const { getExpectedTwilioSignature } = twilio;

const PUBLIC_URL = 'https://inbox.example.test/base';
// The operator's secrets: a connection a workspace admin made must never verify with them.
const OPERATOR_WA_SECRET = 'operator-whatsapp-secret-0123456789';
const OPERATOR_TWILIO_TOKEN = 'operator-twilio-auth-token-0123456789';
const OPERATOR_WAHA_SECRET = 'operator-waha-secret-0123456789';

const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: `${PUBLIC_URL}/`,
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: OPERATOR_WA_SECRET },
      'sms.twilio': { authToken: OPERATOR_TWILIO_TOKEN, accountSid: 'ACoperator' },
      'whatsapp_session.waha': { webhookSecret: OPERATOR_WAHA_SECRET },
    }),
  },
});

const unique = () => randomBytes(4).toString('hex');
const digits = () => String(100_000_000 + Math.floor(Math.random() * 899_999_999));
const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

interface Connection {
  id: number;
  integrationKey: string;
  externalAccountId: string;
  webhookUrl: string | null;
  hasWebhookSecrets: boolean;
  webhookVerifyToken?: string;
  managedBy: string;
}

async function create(headers: Record<string, string>, body: Record<string, unknown>) {
  return ctx.app.inject({ method: 'POST', url: '/v1/connections', headers: json(headers), payload: { name: 'Ours', ...body } });
}
async function workspaceConnection(headers: Record<string, string>, body: Record<string, unknown>): Promise<Connection> {
  const res = await create(headers, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
/** The path part of a connection's webhook URL, as the app sees it behind INBOX_PUBLIC_URL. */
const pathOf = (c: Connection) => c.webhookUrl!.slice(PUBLIC_URL.length);

/** A WhatsApp Cloud text message to `phoneNumberId`, with a fresh message id. */
function whatsappText(phoneNumberId: string, text = 'hello') {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = phoneNumberId;
  value.messages[0].id = `wamid.${unique()}${unique()}`;
  value.messages[0].text.body = text;
  return payload;
}
const postSigned = (path: string, payload: object, secret: string) => {
  const body = JSON.stringify(payload);
  return ctx.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(secret, body)}` },
    payload: body,
  });
};
const inboxRows = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('webhook_inbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const connectionRows = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('connections')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
/** The inbound message with this provider id, once the worker has applied it. */
const messageWithId = (externalId: string) =>
  waitFor(
    () => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(),
    `message ${externalId}`,
  );
const processedRow = (id: string) =>
  waitFor(
    () =>
      ctx.deps.db
        .selectFrom('webhook_inbox')
        .selectAll()
        .where('id', '=', id)
        .where('status', 'in', ['processed', 'failed', 'dead_letter'])
        .executeTakeFirst(),
    `delivery ${id} processed`,
  );
const newestRowId = async () =>
  (await ctx.deps.db.selectFrom('webhook_inbox').select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirstOrThrow())
    .id;

describe('A connection webhook URL', () => {
  it('is <INBOX_PUBLIC_URL>/webhooks/<integrationKey>/ck_ + 24 random characters, one per connection', async () => {
    const tenant = await makeTenant(ctx.deps);
    const a = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${digits()}` });
    const b = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${digits()}` });
    const pattern = new RegExp(`^${PUBLIC_URL.replaceAll('.', '\\.')}/webhooks/sms\\.twilio/ck_[A-Za-z0-9_-]{24}$`);
    expect(a.webhookUrl).toMatch(pattern);
    expect(b.webhookUrl).toMatch(pattern);
    expect(a.webhookUrl).not.toBe(b.webhookUrl);
    // The operator's connections get one too; live chat takes no webhooks.
    const operator = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: digits() });
    expect(operator.webhookUrl).toMatch(/\/webhooks\/whatsapp\/ck_/);
    const chat = await workspaceConnection(tenant.headers, { integrationKey: 'livechat' });
    expect(chat.webhookUrl).toBeNull();
  });

  it('takes write-only webhookSecrets, sealed at rest, shown only as hasWebhookSecrets', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `own-secret-${unique()}-0123456789`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: secret },
    });
    expect(c.hasWebhookSecrets).toBe(true);
    const listed = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers })).body;
    expect(listed).not.toContain(secret);
    expect(listed).toContain('"hasWebhookSecrets":true');
    const stored = await ctx.deps.db
      .selectFrom('connections')
      .select('webhook_secrets_sealed')
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(stored.webhook_secrets_sealed).not.toBeNull();
    expect(stored.webhook_secrets_sealed!.includes(Buffer.from(secret))).toBe(false);

    const cleared = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${c.id}`,
      headers: json(tenant.headers),
      payload: { webhookSecrets: null },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().data.hasWebhookSecrets).toBe(false);
  });

  it('never leaves a whatsapp_session without its signing secret: removing it is refused, replacing it is not', async () => {
    const tenant = await makeTenant(ctx.deps);
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp_session',
      externalAccountId: `session-${unique()}`,
      webhookSecrets: { webhookSecret: 'first-secret-0123456789' },
    });
    const patch = (webhookSecrets: object | null) =>
      ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${c.id}`, headers: json(tenant.headers), payload: { webhookSecrets } });
    for (const webhookSecrets of [null, {}]) {
      const res = await patch(webhookSecrets);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/16 to 255 characters/) });
    }
    // the first secret still verifies its deliveries
    const body = fixture('whatsapp_session', 'message.json');
    const signed = (secret: string) =>
      ctx.app.inject({ method: 'POST', url: pathOf(c), headers: json({ 'x-signature': sign(secret, body) }), payload: body });
    expect((await signed('first-secret-0123456789')).statusCode).toBe(200);
    expect((await patch({ webhookSecret: 'second-secret-0123456789' })).statusCode).toBe(200);
    expect((await signed('second-secret-0123456789')).statusCode).toBe(200);
    expect((await signed('first-secret-0123456789')).statusCode).toBe(401);
  });

  it('refuses (422, nothing written) a webhook secret name that is not a setting of the integration', async () => {
    const tenant = await makeTenant(ctx.deps);
    const before = await connectionRows();
    const cases = [
      { integrationKey: 'sms.twilio', externalAccountId: `+1555${digits()}`, webhookSecrets: { appSecret: 'x' } },
      { integrationKey: 'whatsapp', externalAccountId: digits(), webhookSecrets: { signingKey: 'x' } },
      { integrationKey: 'livechat', webhookSecrets: { webhookSecret: 'x' } },
      { integrationKey: 'telegram', externalAccountId: digits(), webhookSecrets: { webhookSecret: 'x' } },
    ];
    for (const body of cases) {
      const res = await create(tenant.headers, body);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
      expect(res.json().error.message).toMatch(/appSecret|signingKey|webhookSecret/);
    }
    expect(await connectionRows()).toBe(before);

    const c = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${digits()}` });
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${c.id}`,
      headers: json(tenant.headers),
      payload: { webhookSecrets: { webhookSecret: 'not-twilio' } },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.message).toContain('webhookSecrets.webhookSecret is not a setting of sms.twilio');
    const row = await ctx.deps.db
      .selectFrom('connections')
      .select('webhook_secrets_sealed')
      .where('id', '=', c.id)
      .executeTakeFirstOrThrow();
    expect(row.webhook_secrets_sealed).toBeNull();
  });

  it('gives Meta connections a generated verify token, shown to admins only, that answers the challenge', async () => {
    const tenant = await makeTenant(ctx.deps);
    const c = await workspaceConnection(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: digits() });
    expect(c.webhookVerifyToken).toMatch(/^vt_[A-Za-z0-9_-]{32}$/);
    const sms = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${digits()}` });
    expect(sms.webhookVerifyToken).toBeUndefined();

    const reader = await issueApiKey(ctx.deps.db, tenant.workspace.id, 'reader', ['read']);
    const seenByReader = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: { 'x-api-key': reader.key } })).json()
      .data as Connection[];
    expect(seenByReader.find((x) => x.id === c.id)!.webhookVerifyToken).toBeUndefined();
    const seenByAdmin = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers })).json()
      .data as Connection[];
    expect(seenByAdmin.find((x) => x.id === c.id)!.webhookVerifyToken).toBe(c.webhookVerifyToken);

    const challenge = (token: string) =>
      ctx.app.inject({
        method: 'GET',
        url: `${pathOf(c)}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=1158201444`,
      });
    const ok = await challenge(c.webhookVerifyToken!);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('1158201444');
    expect((await challenge(OPERATOR_WA_SECRET)).statusCode).toBe(404);
    expect((await challenge(`${c.webhookVerifyToken}x`)).statusCode).toBe(404);
  });

  it('answers 404 for an unknown connection key, or one of another integration', async () => {
    const tenant = await makeTenant(ctx.deps);
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: 'own-secret-0123456789' },
    });
    const key = c.webhookUrl!.split('/').at(-1)!;
    const before = await inboxRows();
    for (const path of [`/webhooks/whatsapp/ck_${'A'.repeat(24)}`, `/webhooks/social_one.native/${key}`]) {
      const res = await postSigned(path, whatsappText(c.externalAccountId), 'own-secret-0123456789');
      expect(res.statusCode, path).toBe(404);
      expect(res.json().error.code).toBe('not_found');
      expect(
        (await ctx.app.inject({ method: 'GET', url: `${path}?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1` })).statusCode,
      ).toBe(404);
    }
    expect(await inboxRows()).toBe(before);
  });

  it("verifies a workspace connection's deliveries with its own secret, never the operator's", async () => {
    const tenant = await makeTenant(ctx.deps);
    const own = `own-wa-secret-${unique()}`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: own },
    });
    const before = await inboxRows();
    const forged = await postSigned(pathOf(c), whatsappText(c.externalAccountId), OPERATOR_WA_SECRET);
    expect(forged.statusCode).toBe(401);
    expect(forged.json().error.code).toBe('invalid_api_key');
    expect(await inboxRows()).toBe(before);

    const payload = whatsappText(c.externalAccountId, 'on my own URL');
    const res = await postSigned(pathOf(c), payload, own);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ status: 'queued' });
    const message = await messageWithId(payload.entry[0].changes[0].value.messages[0].id);
    expect(message.connection_id).toBe(c.id);
    expect(message.text).toBe('on my own URL');

    // Without secrets of its own a workspace connection verifies nothing.
    const bare = await workspaceConnection(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: digits() });
    expect((await postSigned(pathOf(bare), whatsappText(bare.externalAccountId), OPERATOR_WA_SECRET)).statusCode).toBe(401);
  });

  it('takes an account id pasted with spaces around it as the id, so its deliveries find it; a blank one is 422', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `own-wa-secret-${unique()}`;
    const id = digits();
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: ` ${id}\n`,
      webhookSecrets: { webhookSecret: secret },
    });
    expect(c.externalAccountId).toBe(id);
    const payload = whatsappText(id, 'pasted with a space');
    expect((await postSigned(pathOf(c), payload, secret)).statusCode).toBe(200);
    expect((await messageWithId(payload.entry[0].changes[0].value.messages[0].id)).connection_id).toBe(c.id);

    const again = await create(tenant.headers, { integrationKey: 'whatsapp', externalAccountId: id });
    expect(again.statusCode, again.body).toBe(409);
    const before = await connectionRows();
    for (const integrationKey of ['whatsapp', 'email.mailgun']) {
      const blank = await create(tenant.headers, { integrationKey, externalAccountId: '   ' });
      expect(blank.statusCode, blank.body).toBe(422);
      expect(blank.json().error.message).toContain('externalAccountId');
    }
    expect(await connectionRows()).toBe(before);
  });

  it("falls back on the integration's settings for a connection the operator made", async () => {
    const tenant = await makeTenant(ctx.deps);
    const c = (await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
    })) as Connection;
    const payload = whatsappText(c.externalAccountId, 'operator fallback');
    const res = await postSigned(pathOf(c), payload, OPERATOR_WA_SECRET);
    expect(res.statusCode, res.body).toBe(200);
    expect((await messageWithId(payload.entry[0].changes[0].value.messages[0].id)).connection_id).toBe(c.id);
  });

  it('applies its events to its own connection only: an event naming another account is dropped', async () => {
    const victim = await makeTenant(ctx.deps);
    const other = await workspaceConnection(victim.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: `victim-${unique()}` },
    });
    const tenant = await makeTenant(ctx.deps);
    const own = `own-wa-secret-${unique()}`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: own },
    });
    // One body, two changes: one for this connection, one naming the other workspace's account.
    const mine = whatsappText(c.externalAccountId, 'mine');
    const theirs = whatsappText(other.externalAccountId, 'injected');
    mine.entry.push(theirs.entry[0]);
    const res = await postSigned(pathOf(c), mine, own);
    expect(res.statusCode, res.body).toBe(200);
    const row = await processedRow(await newestRowId());
    expect(row.status).toBe('processed');
    expect(row.app_id).toBe(tenant.workspace.appId);
    expect((await messageWithId(mine.entry[0].changes[0].value.messages[0].id)).connection_id).toBe(c.id);
    const injected = await ctx.deps.db
      .selectFrom('messages')
      .select('id')
      .where('external_id', '=', theirs.entry[0].changes[0].value.messages[0].id)
      .executeTakeFirst();
    expect(injected).toBeUndefined();
  });

  it('says on the connection, as its lastError, that events naming another account were dropped', async () => {
    // The usual slip: the display phone number typed where WhatsApp names the phone-number id.
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: '15550783881',
      webhookSecrets: { webhookSecret: secret },
    });
    const phoneNumberId = digits();
    const res = await postSigned(pathOf(c), whatsappText(phoneNumberId, 'lost'), secret);
    expect(res.statusCode, res.body).toBe(200);
    expect((await processedRow(await newestRowId())).status).toBe('processed');
    const health = async () =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/connections/${c.id}`, headers: tenant.headers })).json().data;
    expect(await health()).toMatchObject({
      lastDeliveryAt: null,
      lastErrorAt: expect.any(String),
      lastError: `events for whatsapp account "${phoneNumberId}" arrived on this connection's URL and were dropped: this connection's account is "15550783881"`,
    });
    // A delivery of its own is a delivery, whatever else it carried.
    const mixed = whatsappText('15550783881', 'mine');
    mixed.entry.push(whatsappText(phoneNumberId).entry[0]);
    expect((await postSigned(pathOf(c), mixed, secret)).statusCode).toBe(200);
    await messageWithId(mixed.entry[0].changes[0].value.messages[0].id);
    await waitFor(async () => (await health()).lastDeliveryAt, 'the connection to show the delivery');
  });

  it('notes on the delivery, as its lastError, the events it dropped for naming another account, and keeps it processed', async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `wa-${unique()}`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: digits(),
      webhookSecrets: { webhookSecret: secret },
    });
    const row = async (id: string) =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/admin/webhook-inbox/${id}`, headers: tenant.headers })).json().data;
    // Its own events are applied; the row is done (a retry would drop the same events again).
    const phoneNumberId = digits();
    const mixed = whatsappText(c.externalAccountId, 'mine');
    mixed.entry.push(whatsappText(phoneNumberId, 'not mine').entry[0]);
    expect((await postSigned(pathOf(c), mixed, secret)).statusCode).toBe(200);
    const id = await newestRowId();
    await processedRow(id);
    await messageWithId(mixed.entry[0].changes[0].value.messages[0].id);
    expect(await row(id)).toMatchObject({
      status: 'processed',
      processedAt: expect.any(String),
      nextRetryAt: null,
      lastError: `events for whatsapp account "${phoneNumberId}" arrived on this connection's URL and were dropped: this connection's account is "${c.externalAccountId}"`,
    });
    // A delivery all its own carries no note.
    const own = whatsappText(c.externalAccountId, 'all mine');
    expect((await postSigned(pathOf(c), own, secret)).statusCode).toBe(200);
    const ownId = await newestRowId();
    await processedRow(ownId);
    expect(await row(ownId)).toMatchObject({ status: 'processed', lastError: null });
  });

  it("verifies Twilio's signature over the connection's own URL with its own auth token, and drops receipts of another number", async () => {
    const tenant = await makeTenant(ctx.deps);
    const authToken = `own-twilio-token-${unique()}`;
    const number = `+1555${digits()}`.slice(0, 12);
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'sms.twilio',
      externalAccountId: number,
      webhookSecrets: { authToken },
    });
    const form = new URLSearchParams(fixture('sms.twilio', 'inbound.form'));
    form.set('To', number);
    form.set('MessageSid', `SM${unique()}${unique()}`);
    form.set('Body', 'per-connection SMS');
    const post = (body: string, token: string, url = c.webhookUrl!) =>
      ctx.app.inject({
        method: 'POST',
        url: pathOf(c),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': getExpectedTwilioSignature(token, url, Object.fromEntries(new URLSearchParams(body))),
        },
        payload: body,
      });
    const before = await inboxRows();
    expect((await post(form.toString(), OPERATOR_TWILIO_TOKEN)).statusCode).toBe(401);
    expect((await post(form.toString(), authToken, `${PUBLIC_URL}/webhooks/sms.twilio`)).statusCode).toBe(401);
    expect(await inboxRows()).toBe(before);
    const res = await post(form.toString(), authToken);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('text/xml');
    expect((await messageWithId(form.get('MessageSid')!)).connection_id).toBe(c.id);

    // A status callback naming a message another workspace's number sent does not touch it.
    const victim = await makeTenant(ctx.deps);
    const theirs = await makeConnection(ctx.deps, victim.workspace.id, {
      integrationKey: 'sms.twilio',
      externalAccountId: `+1666${digits()}`,
    });
    const sid = `SM${unique()}${unique()}`;
    const sent = await makeOutboundMessage(ctx.deps, theirs, sid, 'sent');
    const status = new URLSearchParams(fixture('sms.twilio', 'status-delivered.form'));
    status.set('MessageSid', sid);
    status.set('SmsSid', sid);
    status.set('From', number);
    expect((await post(status.toString(), authToken)).statusCode).toBe(200);
    expect((await processedRow(await newestRowId())).status).toBe('processed');
    const after = await ctx.deps.db.selectFrom('messages').select('status').where('id', '=', sent.id).executeTakeFirstOrThrow();
    expect(after.status).toBe('sent');
  });

  it('keeps a Twilio number typed with spaces, dashes or brackets in E.164, so its deliveries find it', async () => {
    const tenant = await makeTenant(ctx.deps);
    const authToken = `own-twilio-token-${unique()}`;
    const local = digits().slice(0, 7);
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'sms.twilio',
      externalAccountId: `+1 (555) ${local.slice(0, 3)}-${local.slice(3)}`,
      webhookSecrets: { authToken },
    });
    const number = `+1555${local}`;
    expect(c.externalAccountId).toBe(number);
    const neutral = await workspaceConnection(tenant.headers, {
      integrationKey: 'sms',
      externalAccountId: `+44 7700.${digits().slice(0, 6)}`,
    });
    expect(neutral.externalAccountId).toMatch(/^\+447700[0-9]{6}$/);
    // The same number written another way is the same account.
    const again = await create(tenant.headers, {
      integrationKey: 'sms.twilio',
      externalAccountId: ` ${number.slice(0, 5)} ${number.slice(5)}`,
    });
    expect(again.statusCode, again.body).toBe(409);

    const form = new URLSearchParams(fixture('sms.twilio', 'inbound.form'));
    form.set('To', number);
    form.set('MessageSid', `SM${unique()}${unique()}`);
    form.set('Body', 'to a number typed with spaces');
    const body = form.toString();
    const res = await ctx.app.inject({
      method: 'POST',
      url: pathOf(c),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': getExpectedTwilioSignature(authToken, c.webhookUrl!, Object.fromEntries(form)),
      },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await messageWithId(form.get('MessageSid')!)).connection_id).toBe(c.id);
  });

  it("verifies WAHA's X-Webhook-Hmac with the connection's own secret", async () => {
    const tenant = await makeTenant(ctx.deps);
    const secret = `own-waha-secret-${unique()}`;
    const session = `session-${unique()}`;
    const c = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp_session.waha',
      externalAccountId: session,
      webhookSecrets: { webhookSecret: secret },
    });
    const payload = JSON.parse(fixture('whatsapp_session.waha', 'message.json'));
    payload.session = session;
    payload.payload.id = `false_${unique()}@c.us_${unique()}`;
    const body = JSON.stringify(payload);
    const post = (key: string) =>
      ctx.app.inject({
        method: 'POST',
        url: pathOf(c),
        headers: {
          'content-type': 'application/json',
          'x-webhook-hmac': createHmac('sha512', key).update(body).digest('hex'),
          'x-webhook-hmac-algorithm': 'sha512',
        },
        payload: body,
      });
    expect((await post(OPERATOR_WAHA_SECRET)).statusCode).toBe(401);
    const res = await post(secret);
    expect(res.statusCode, res.body).toBe(200);
    const row = await processedRow(await newestRowId());
    expect(row.status, row.last_error ?? '').toBe('processed');
    expect(row.app_id).toBe(tenant.workspace.appId);
  });

  it("refuses on a Telegram bot's URL a secret that names another bot", async () => {
    const tenant = await makeTenant(ctx.deps);
    const mine = await workspaceConnection(tenant.headers, { integrationKey: 'telegram', externalAccountId: digits() });
    const other = await workspaceConnection(tenant.headers, { integrationKey: 'telegram', externalAccountId: digits() });
    const mySecret = `my-${unique()}-secret`;
    const otherSecret = `other-${unique()}-secret`;
    await setTelegramSecretHash(ctx.deps.db, mine.id, createHash('sha256').update(mySecret).digest('hex'));
    await setTelegramSecretHash(ctx.deps.db, other.id, createHash('sha256').update(otherSecret).digest('hex'));
    const update = fixture('telegram', 'message.json');
    const post = (secret: string) =>
      ctx.app.inject({
        method: 'POST',
        url: pathOf(mine),
        headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
        payload: update,
      });
    const before = await inboxRows();
    expect((await post(otherSecret)).statusCode).toBe(401);
    expect(await inboxRows()).toBe(before);
    expect((await post(mySecret)).statusCode).toBe(200);
    expect(await inboxRows()).toBe(before + 1);
  });
});
