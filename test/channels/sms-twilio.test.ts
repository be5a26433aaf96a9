import twilio from 'twilio';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { adapters } from '../../src/channels/index.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

// Twilio's own SDK computes every signature these tests send: an oracle independent of the service.
const { getExpectedTwilioSignature, validateRequest } = twilio;

const AUTH_TOKEN = 'twilio-auth-token-0123456789abcdef';
const ACCOUNT_SID = 'ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
const PUBLIC_URL = 'https://inbox.example.com';
const HOOK_URL = `${PUBLIC_URL}/webhooks/sms.twilio`;
const NUMBER = '+15557122661';
// The neutral `sms` key on the same fake Twilio: its replies must never name a StatusCallback.
const SMS_SECRET = 'sms-webhook-secret-0123456789';
const SMS_NUMBER = '+14155550100';
const SMS_TOKEN = 'sms-access-token-0123456789';
const fake = await startFakeProviders();
afterAll(() => fake.close());
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  workers: true,
  logLines,
  env: {
    INBOX_PUBLIC_URL: `${PUBLIC_URL}/`,
    INBOX_INTEGRATIONS: JSON.stringify({
      'sms.twilio': { authToken: AUTH_TOKEN, accountSid: ACCOUNT_SID, apiBaseUrl: fake.baseUrls.sms },
      sms: { webhookSecret: SMS_SECRET, accessToken: SMS_TOKEN, accountSid: ACCOUNT_SID, apiBaseUrl: fake.baseUrls.sms },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const number = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms.twilio', externalAccountId: NUMBER });
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: SMS_NUMBER });
beforeEach(() => fake.reset());

/** The form's parameters as Twilio's SDK takes them: one value, or all values of a repeated name. */
function paramsOf(form: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(form)) {
    const seen = out[k];
    out[k] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v];
  }
  return out;
}

const signatureFor = (form: string, url = HOOK_URL, token = AUTH_TOKEN) => getExpectedTwilioSignature(token, url, paramsOf(form));

const post = (form: string, headers: Record<string, string>, path = '/webhooks/sms.twilio') =>
  ctx.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: form,
  });

const rowCount = async () =>
  (await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('integration_key', '=', 'sms.twilio').execute()).length;

const messageBy = (externalId: string) =>
  waitFor(
    () => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(),
    `message ${externalId}`,
  );

/** A fixture with its MessageSid (and SmsSid) replaced, so each test has its own message. */
function withSid(name: string, sid: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(fixture('sms.twilio', name));
  for (const k of ['MessageSid', 'SmsSid', 'SmsMessageSid']) if (params.has(k)) params.set(k, sid);
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  return params.toString();
}

describe('sms.twilio: verification', () => {
  it('accepts a delivery Twilio signed for INBOX_PUBLIC_URL + path and answers an empty TwiML document as text/xml', async () => {
    const form = withSid('inbound.form', 'SMverify0001');
    const signature = signatureFor(form);
    // The oracle agrees with itself on the URL the service will check.
    expect(validateRequest(AUTH_TOKEN, signature, HOOK_URL, paramsOf(form))).toBe(true);
    const res = await post(form, { 'x-twilio-signature': signature });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/xml/);
    expect(res.body).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?><Response\/>$/);
    const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ integration_key: 'sms.twilio', raw_body: form, verification: 'signed', event: 'received' });
  });

  it('refuses a wrong, missing or other-token signature with 401 invalid_api_key and stores nothing', async () => {
    const form = withSid('inbound.form', 'SMverify0002');
    const before = await rowCount();
    const attempts: Record<string, string>[] = [
      {},
      { 'x-twilio-signature': '' },
      { 'x-twilio-signature': signatureFor(form, HOOK_URL, 'another-auth-token') },
      { 'x-twilio-signature': signatureFor(`${form}&Extra=1`) },
      { 'x-twilio-signature': signatureFor(form).toLowerCase() },
    ];
    for (const headers of attempts) {
      const res = await post(form, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_api_key');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
    expect(await rowCount()).toBe(before);
  });

  it('refuses a signature over another URL and logs the URL it expected', async () => {
    const form = withSid('inbound.form', 'SMverify0003');
    const before = await rowCount();
    logLines.length = 0;
    // Twilio was given the address the request arrived at (inject's Host), not the public URL.
    const res = await post(form, { 'x-twilio-signature': signatureFor(form, 'http://localhost/webhooks/sms.twilio') });
    expect(res.statusCode).toBe(401);
    expect(await rowCount()).toBe(before);
    const warning = logLines.find((l) => typeof l.msg === 'string' && l.msg.includes('X-Twilio-Signature'));
    expect(warning?.msg).toContain(`the expected URL is ${HOOK_URL}`);
    expect(warning?.msg).toContain('http://localhost');
    expect(JSON.stringify(logLines)).not.toContain(AUTH_TOKEN);
    // A signature for some third URL: still named, the expected one.
    logLines.length = 0;
    expect((await post(form, { 'x-twilio-signature': signatureFor(form, 'https://elsewhere.example/hook') })).statusCode).toBe(401);
    expect(logLines.some((l) => String(l.msg).includes(`does not match the expected URL ${HOOK_URL}`))).toBe(true);
  });

  it('signs the query string as part of the URL', async () => {
    const form = withSid('inbound.form', 'SMverify0004');
    const path = '/webhooks/sms.twilio?tenant=acme&x=1';
    expect((await post(form, { 'x-twilio-signature': signatureFor(form, `${PUBLIC_URL}${path}`) }, path)).statusCode).toBe(200);
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) }, path)).statusCode).toBe(401);
  });

  it('signs every value of a repeated parameter, as Twilio does', async () => {
    const form = `${withSid('inbound.form', 'SMverify0005')}&Tag=b&Tag=a`;
    expect(paramsOf(form).Tag).toEqual(['b', 'a']);
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(200);
    const dropped = form.replace('&Tag=a', '');
    expect((await post(dropped, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(401);
  });

  it('refuses every delivery while authToken is unset, and malformed bodies with 4xx, never 500', async () => {
    const form = withSid('inbound.form', 'SMverify0006');
    for (const body of ['%%%&&==%zz', '\u00ff\u00fe', '', 'a'.repeat(10_000)]) {
      const res = await post(body, { 'x-twilio-signature': signatureFor(form) });
      expect(res.statusCode).toBe(401);
    }
    const signature = signatureFor(form);
    const verification = await adapters['sms.twilio'].verify(
      { text: form, bytes: Buffer.from(form) },
      { 'x-twilio-signature': signature },
      {},
      { isKnownOutboundMessage: async () => false, request: { publicUrl: HOOK_URL, requestUrl: HOOK_URL, warn: () => {} } },
    );
    expect(verification.ok).toBe(false);
  });
});

describe('sms.twilio: what Twilio sends becomes messages and receipts', () => {
  it('an incoming SMS opens a thread on the number (To) for the sender (From)', async () => {
    const form = withSid('inbound.form', 'SMinbound0001');
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(200);
    const message = await messageBy('SMinbound0001');
    expect(message).toMatchObject({ connection_id: number.id, direction: 'inbound', text: 'Hello from my phone!' });
    const contact = await ctx.deps.db
      .selectFrom('threads')
      .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
      .select(['threads.connection_id'])
      .where('threads.id', '=', message.thread_id)
      .executeTakeFirstOrThrow();
    expect(contact.connection_id).toBe(number.id);
  });

  it('an MMS is its Body, with an attachment per MediaUrlN fetched with basic auth', async () => {
    const form = withSid('inbound-mms.form', 'MMinbound0001');
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(200);
    const message = await messageBy('MMinbound0001');
    expect(message.text).toBe('Here is the receipt');
    const attachments = await ctx.deps.db
      .selectFrom('attachments')
      .select(['kind', 'content_type', 'source'])
      .where('message_id', '=', message.id)
      .orderBy('id')
      .execute();
    expect(attachments.map((a) => [a.kind, a.content_type, (a.source as { auth: string }).auth])).toEqual([
      ['image', 'image/jpeg', 'basic'],
      ['file', 'application/pdf', 'basic'],
    ]);
  });

  it('status callbacks find the message by MessageSid: delivered, then undelivered with its ErrorCode', async () => {
    const sent = await makeOutboundMessage(ctx.deps, number, 'SMoutbound0001');
    const delivered = withSid('status-delivered.form', 'SMoutbound0001');
    expect((await post(delivered, { 'x-twilio-signature': signatureFor(delivered) })).statusCode).toBe(200);
    await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
      return m.status === 'delivered';
    }, 'the receipt');
    const failedOne = await makeOutboundMessage(ctx.deps, number, 'SMoutbound0002');
    const undelivered = withSid('status-undelivered.form', 'SMoutbound0002');
    expect((await post(undelivered, { 'x-twilio-signature': signatureFor(undelivered) })).statusCode).toBe(200);
    const failed = await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', failedOne.id).executeTakeFirstOrThrow();
      return m.status === 'failed' ? m : undefined;
    }, 'the failure');
    expect(failed.error).toBe('30003');
  });

  it('normalises statuses it has no use for, and ones named like Object.prototype members, to nothing', () => {
    const normalise = (status: string) =>
      adapters['sms.twilio'].normalise({ MessageSid: 'SM1', MessageStatus: status, From: NUMBER, To: '+1555' }, { verification: 'signed' });
    for (const status of ['queued', 'sending', 'accepted', 'scheduled', 'constructor', '__proto__', 'toString']) {
      expect(normalise(status)).toEqual([]);
    }
    expect(normalise('read')).toEqual([{ type: 'status', resolveBy: 'sent_message', externalMessageId: 'SM1', status: 'read' }]);
    expect(() => adapters['sms.twilio'].normalise({ MessageStatus: 'sent' }, { verification: 'signed' })).toThrow(/MessageSid/);
  });
});

describe('sms.twilio: replies', () => {
  const replyTo = async (from: string, sid: string) => {
    const form = withSid('inbound.form', sid, { From: from });
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(200);
    const { thread_id } = await messageBy(sid);
    return replyIn(thread_id);
  };

  /** Queues a reply in the thread and waits for the worker to record its send's outcome. */
  const replyIn = async (thread_id: number) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread_id}/messages`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { text: 'Thanks, on its way.' },
    });
    expect(res.statusCode, res.body).toBe(202);
    return waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).executeTakeFirstOrThrow();
      return m.status === 'queued' ? undefined : m;
    }, 'the reply to leave queued');
  };

  it("sends through Twilio's Messages API with accountSid:authToken by default", async () => {
    const sent = await replyTo('+15017120001', 'SMreply0001');
    expect(sent.status).toBe('sent');
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.path).toBe(`/twilio/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`);
    // StatusCallback is INBOX_PUBLIC_URL (its trailing slash dropped) + this key's webhook path.
    expect(request.parsed).toEqual({ To: '+15017120001', From: NUMBER, Body: 'Thanks, on its way.', StatusCallback: HOOK_URL });
    expect(sent.external_id).toBe((request.response!.body as { sid: string }).sid);
  });

  it("the plain sms key's reply form is exactly To, From and Body, with no StatusCallback", async () => {
    const sid = 'SMplain0001';
    const body = new URLSearchParams(fixture('sms', 'inbound.form'));
    for (const k of ['MessageSid', 'SmsSid', 'SmsMessageSid']) body.set(k, sid);
    body.set('From', '+15017120009');
    const form = body.toString();
    const res = await post(form, { 'x-signature': sign(SMS_SECRET, form) }, '/webhooks/sms');
    expect(res.statusCode, res.body).toBe(200);
    const sent = await replyIn((await messageBy(sid)).thread_id);
    expect(sent.status).toBe('sent');
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.path).toBe(`/twilio/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
    expect(request.body).toBe(`To=%2B15017120009&From=${encodeURIComponent(SMS_NUMBER)}&Body=Thanks%2C+on+its+way.`);
  });

  it('names StatusCallback only for sms.twilio, and only when given the public URL', async () => {
    const target = { accountId: NUMBER, to: '+15017120010', text: 'Hi', messageId: 1 };
    const credentials = { apiBaseUrl: fake.baseUrls.sms, accountSid: ACCOUNT_SID, accessToken: AUTH_TOKEN };
    const options = { timeoutMs: 5_000, publicUrl: PUBLIC_URL };
    expect((await adapters['sms.twilio'].send!(target, credentials, options)).outcome).toBe('sent');
    expect((await adapters.sms.send!(target, credentials, options)).outcome).toBe('sent');
    expect((await adapters['sms.twilio'].send!(target, credentials, { timeoutMs: 5_000 })).outcome).toBe('sent');
    expect(fake.requests.map((r) => r.body)).toEqual([
      `To=%2B15017120010&From=%2B15557122661&Body=Hi&StatusCallback=${encodeURIComponent(HOOK_URL)}`,
      'To=%2B15017120010&From=%2B15557122661&Body=Hi',
      'To=%2B15017120010&From=%2B15557122661&Body=Hi',
    ]);
  });

  it("a reply's status callback, signed by Twilio for the StatusCallback it was given, marks it delivered", async () => {
    const sent = await replyTo('+15017120003', 'SMreply0003');
    expect(sent.status).toBe('sent');
    const request = fake.requests.at(-1)!;
    const sid = (request.response!.body as { sid: string }).sid;
    expect(sent.external_id).toBe(sid);
    // Twilio posts to the URL the send named and signs exactly that URL.
    const callbackUrl = (request.parsed as Record<string, string>).StatusCallback!;
    const receipt = withSid('status-delivered.form', sid, { To: '+15017120003', From: NUMBER });
    const res = await post(receipt, { 'x-twilio-signature': signatureFor(receipt, callbackUrl) }, new URL(callbackUrl).pathname);
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', sent.id).executeTakeFirstOrThrow();
      return m.status === 'delivered';
    }, 'the reply to be delivered');
  });

  it("a status callback that beats the send's answer is applied when the send is recorded", async () => {
    const form = withSid('inbound.form', 'SMearly0001', { From: '+15017120004' });
    expect((await post(form, { 'x-twilio-signature': signatureFor(form) })).statusCode).toBe(200);
    const { thread_id } = await messageBy('SMearly0001');
    // Twilio has queued the reply and calls back before its answer reaches the service.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sid = 'SM0f1e2d3c4b5a69788796a5b4c3d2e1f0';
    fake.behave(`/twilio/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`, {
      heldUntil: held,
      answer: { status: 201, body: { sid, account_sid: ACCOUNT_SID, to: '+15017120004', from: NUMBER, status: 'queued' } },
    });
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread_id}/messages`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { text: 'Thanks, on its way.' },
    });
    expect(res.statusCode, res.body).toBe(202);
    await waitFor(async () => fake.requests.length === 1, 'the send to reach Twilio');
    const receipt = withSid('status-delivered.form', sid, { To: '+15017120004', From: NUMBER });
    expect((await post(receipt, { 'x-twilio-signature': signatureFor(receipt) })).statusCode).toBe(200);
    await waitFor(
      async () => (await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('status', '=', 'received').execute()).length === 0,
      'the callback to be processed',
    );
    release();
    const delivered = await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).executeTakeFirstOrThrow();
      return m.status === 'delivered' ? m : undefined;
    }, 'the reply to be delivered');
    expect(delivered.external_id).toBe(sid);
  });

  it("a connection's own credentials win over the integration's", async () => {
    const own = { accountSid: 'ACsubaccount000000000000000000000', accessToken: 'subaccount-auth-token' };
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${number.id}`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { credentials: own },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    try {
      expect((await replyTo('+15017120002', 'SMreply0002')).status).toBe('sent');
      const request = fake.requests.at(-1)!;
      expect(request.path).toBe(`/twilio/2010-04-01/Accounts/${own.accountSid}/Messages.json`);
      expect(request.headers.authorization).toBe(`Basic ${Buffer.from(`${own.accountSid}:${own.accessToken}`).toString('base64')}`);
    } finally {
      await ctx.deps.db.updateTable('connections').set({ credentials_sealed: null }).where('id', '=', number.id).execute();
    }
  });
});
