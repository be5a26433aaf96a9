import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { PNG_1X1, uploadFile } from '../helpers/multipart.js';
import { fixture, waitFor } from '../helpers/webhooks.js';

const TOKEN = 'EAAG-start-token-0123456789';
const SID = 'AC0123456789abcdef0123456789abcdef';
const WABA = '102290129340398';
const fake = await startFakeProviders();
const smtp = await startSmtpServer();
afterAll(() => Promise.all([fake.close(), smtp.close()]));
const ctx = await useTestContext({
  workers: true,
  env: {
    // What is tested here is the contact each channel's inbound message lands on, not its
    // signature (every adapter's own tests cover those): deliveries go in unsigned.
    INBOX_SKIP_WEBHOOK_VERIFY: 'true',
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: 'x', apiBaseUrl: fake.baseUrls.whatsapp },
      'whatsapp_session.waha': { webhookSecret: 'x', apiBaseUrl: fake.baseUrls.whatsapp_session },
      sms: { webhookSecret: 'x', apiBaseUrl: fake.baseUrls.sms, accountSid: SID },
      'sms.twilio': { authToken: 'x', apiBaseUrl: fake.baseUrls.sms, accountSid: SID },
      aggregator: { webhookSecret: 'x', apiBaseUrl: fake.baseUrls.aggregator },
      email: { webhookSecret: 'x' },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const json = { ...tenant.headers, 'content-type': 'application/json' };
const hook = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: json,
  payload: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
});
expect(hook.statusCode).toBe(201);

const conn = (integrationKey: string, externalAccountId: string, credentials?: Record<string, string>) =>
  makeConnection(ctx.deps, tenant.workspace.id, { integrationKey, externalAccountId, credentials });
const whatsapp = await conn('whatsapp', '106540352242922', { accessToken: TOKEN });
const waha = await conn('whatsapp_session.waha', 'acme-main', { accessToken: 'waha-key' });
const sms = await conn('sms', '+14155550100', { accountSid: SID, accessToken: 'sms-token' });
const twilio = await conn('sms.twilio', '+15557122661', { accountSid: SID, accessToken: 'twilio-token' });
const aggregator = await conn('aggregator', 'agg-acct-7781', { accessToken: 'agg-token' });
const email = await conn('email', 'support@acme.test', { smtpUrl: smtp.url });

beforeEach(() => {
  fake.reset();
  smtp.reset();
});

const start = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/v1/conversations', headers: { ...json, ...headers }, payload });
const settled = (id: number) =>
  waitFor(async () => {
    const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);
const handlesOf = (contactId: number) =>
  ctx.deps.db.selectFrom('contact_handles').select(['integration_key', 'external_id']).where('contact_id', '=', contactId).execute();
const count = async (table: 'contacts' | 'threads' | 'messages') =>
  Number(
    (
      await ctx.deps.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', '=', tenant.workspace.id)
        .executeTakeFirstOrThrow()
    ).n,
  );
const events = (type: string) =>
  ctx.deps.db
    .selectFrom('webhook_events')
    .select('body')
    .where('workspace_id', '=', tenant.workspace.id)
    .where('type', '=', type)
    .execute()
    .then((rows) => rows.map((r) => JSON.parse(r.body as unknown as string).data));

/** Gives the WhatsApp connection its WABA and reads its templates from the fake Graph API. */
async function syncTemplates() {
  const patched = await ctx.app.inject({
    method: 'PATCH',
    url: `/v1/connections/${whatsapp.id}`,
    headers: json,
    payload: { businessAccountId: WABA },
  });
  expect(patched.statusCode, patched.body).toBe(200);
  await ctx.app.inject({ method: 'POST', url: `/v1/connections/${whatsapp.id}/templates/sync`, headers: tenant.headers });
  await waitFor(
    async () =>
      (await ctx.deps.db.selectFrom('whatsapp_templates').select('name').where('connection_id', '=', whatsapp.id).execute()).length === 3,
    'the templates',
  );
  fake.reset();
}

/** Posts a provider delivery (unsigned) and waits for the inbound message it carries. */
async function deliver(key: string, body: string, contentType: string, externalId: string) {
  const res = await ctx.app.inject({ method: 'POST', url: `/webhooks/${key}`, headers: { 'content-type': contentType }, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  return waitFor(
    () => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(),
    `the inbound ${key} message`,
  );
}

/** Each channel's own inbound message from `from`, as its provider sends it. */
const inbound: Record<string, (from: string, id: string) => Promise<{ thread_id: number }>> = {
  whatsapp(from, id) {
    const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
    const value = payload.entry[0].changes[0].value;
    value.metadata.phone_number_id = whatsapp.externalAccountId;
    value.contacts[0].wa_id = from;
    Object.assign(value.messages[0], { from, id, timestamp: String(Math.floor(Date.now() / 1000)) });
    return deliver('whatsapp', JSON.stringify(payload), 'application/json', id);
  },
  'whatsapp_session.waha'(from, id) {
    const payload = JSON.parse(fixture('whatsapp_session.waha', 'message.json'));
    payload.session = waha.externalAccountId;
    Object.assign(payload.payload, { from: `${from}@c.us`, id });
    return deliver('whatsapp_session.waha', JSON.stringify(payload), 'application/json', id);
  },
  sms(from, id) {
    const form = new URLSearchParams(fixture('sms', 'inbound.form'));
    for (const k of ['MessageSid', 'SmsSid', 'SmsMessageSid']) form.set(k, id);
    form.set('From', from);
    form.set('To', sms.externalAccountId);
    return deliver('sms', form.toString(), 'application/x-www-form-urlencoded', id);
  },
  'sms.twilio'(from, id) {
    const form = new URLSearchParams(fixture('sms.twilio', 'inbound.form'));
    for (const k of ['MessageSid', 'SmsSid', 'SmsMessageSid']) form.set(k, id);
    form.set('From', from);
    form.set('To', twilio.externalAccountId);
    return deliver('sms.twilio', form.toString(), 'application/x-www-form-urlencoded', id);
  },
  aggregator(from, id) {
    const payload = JSON.parse(fixture('aggregator', 'message.json'));
    payload.accountId = aggregator.externalAccountId;
    Object.assign(payload.data, { id, from: { id: from, name: 'Jonas' } });
    return deliver('aggregator', JSON.stringify(payload), 'application/json', id);
  },
  async email(from, id) {
    // An answer names the mail it answers: an e-mail thread is a conversation (docs/email.md).
    const sent = await ctx.deps.db
      .selectFrom('messages')
      .select('external_id')
      .where('connection_id', '=', email.id)
      .where('direction', '=', 'outbound')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    const payload = JSON.parse(fixture('email', 'inbound.json'));
    Object.assign(payload.events[0], { messageId: id, to: email.externalAccountId, from: { email: from }, inReplyTo: sent?.external_id });
    return deliver('email', JSON.stringify(payload), 'application/json', id);
  },
};

describe('POST /v1/conversations on every channel that can speak first', () => {
  const cases: {
    what: string;
    connection: () => { id: number; integrationKey: string };
    to: string;
    handle: string;
    /** How the contact writes back (its provider's own `from`). */
    from: string;
    sent: () => unknown;
  }[] = [
    {
      what: 'WAHA, a chat id',
      connection: () => waha,
      to: '14155550143@c.us',
      handle: '14155550143',
      from: '14155550143',
      sent: () => {
        const r = fake.requests.find((q) => q.path === '/waha/api/sendText');
        expect(r?.headers['x-api-key']).toBe('waha-key');
        return expect(r?.parsed).toEqual({ session: 'acme-main', chatId: '14155550143@c.us', text: 'Your table is ready.' });
      },
    },
    {
      what: 'SMS, a number written loosely, sent From the connection number',
      connection: () => sms,
      to: '+1 (415) 555-0142',
      handle: '+14155550142',
      from: '+14155550142',
      sent: () =>
        expect(fake.requests.find((q) => q.provider === 'sms')?.parsed).toMatchObject({
          To: '+14155550142',
          From: '+14155550100',
          Body: 'Your table is ready.',
        }),
    },
    {
      // A fictional 555 number: E.164 in form, though no carrier holds it.
      what: 'Twilio SMS, a fictional number',
      connection: () => twilio,
      to: '+1 555 123 4567',
      handle: '+15551234567',
      from: '+15551234567',
      sent: () =>
        expect(fake.requests.find((q) => q.provider === 'sms')?.parsed).toMatchObject({
          To: '+15551234567',
          From: '+15557122661',
          Body: 'Your table is ready.',
        }),
    },
    {
      what: 'the aggregator',
      connection: () => aggregator,
      to: '+49 151 12345679',
      handle: '+4915112345679',
      from: '+4915112345679',
      sent: () =>
        expect(fake.requests.find((q) => q.provider === 'aggregator')?.parsed).toEqual({
          accountId: 'agg-acct-7781',
          to: '+4915112345679',
          text: 'Your table is ready.',
        }),
    },
    {
      what: 'e-mail, an address in mixed case',
      connection: () => email,
      to: ' Dana.W@Example.ORG ',
      handle: 'dana.w@example.org',
      from: 'DANA.W@example.org',
      sent: () => {
        expect(smtp.mails).toHaveLength(1);
        expect(smtp.mails[0]!.to).toEqual(['dana.w@example.org']);
        expect(smtp.mails[0]!.mail.subject).toBe('Your table is ready.');
        return expect(smtp.mails[0]!.mail.text?.trim()).toBe('Your table is ready.');
      },
    },
  ];

  it.each(cases)('$what: 202 with the new thread and queued message, sent, and the reply joins them', async (c) => {
    const connection = c.connection();
    const res = await start({ connectionId: connection.id, to: c.to, name: 'Dana', text: 'Your table is ready.' });
    expect(res.statusCode, res.body).toBe(202);
    const { thread, message } = res.json().data;
    expect(thread).toMatchObject({ connectionId: connection.id, integrationKey: connection.integrationKey, status: 'open' });
    expect(message).toMatchObject({ threadId: thread.id, direction: 'outbound', status: 'queued', text: 'Your table is ready.' });
    expect(await handlesOf(thread.contactId)).toEqual([{ integration_key: connection.integrationKey, external_id: c.handle }]);
    expect((await settled(message.id)).status).toBe('sent');
    c.sent();

    // contact.created and thread.created as an inbound message would have made them.
    expect((await events('contact.created')).find((e) => e.id === thread.contactId)).toMatchObject({
      name: 'Dana',
      handles: [{ integrationKey: connection.integrationKey, externalId: c.handle }],
    });
    expect((await events('thread.created')).find((e) => e.id === thread.id)).toMatchObject({ contactId: thread.contactId });

    const answer = await inbound[connection.integrationKey]!(c.from, `in-${thread.id}`);
    expect(answer.thread_id).toBe(thread.id);
  });

  it('WhatsApp Cloud: a template to someone who never wrote, then their answer joins the thread', async () => {
    await syncTemplates();
    const res = await start({
      connectionId: whatsapp.id,
      to: '+1 415 555 0144',
      template: { name: 'order_update', language: 'en_US', parameters: { header: ['#7'], body: ['Ann', '#7'] } },
    });
    expect(res.statusCode, res.body).toBe(202);
    const { thread, message } = res.json().data;
    expect(message.text).toBe('Hi Ann, your order #7 has shipped.');
    expect(thread.replyWindowEndsAt).toBe(new Date(24 * 3600 * 1000).toISOString());
    expect(await handlesOf(thread.contactId)).toEqual([{ integration_key: 'whatsapp', external_id: '14155550144' }]);
    expect((await settled(message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.provider === 'whatsapp')?.parsed).toMatchObject({ to: '14155550144', type: 'template' });
    expect((await inbound.whatsapp!('14155550144', 'wamid.start-1')).thread_id).toBe(thread.id);
  });

  it('WhatsApp Cloud: the answer comes from the wa_id WhatsApp named in the send answer (Brazil, no ninth digit)', async () => {
    // Meta: the send answer's contacts[0].wa_id is the id WhatsApp uses for the number written
    // to, and the contact's messages come from it (Brazil's mobiles without the ninth digit).
    await syncTemplates();
    fake.behave(`/graph/v23.0/${whatsapp.externalAccountId}/messages`, {
      status: 200,
      body: {
        messaging_product: 'whatsapp',
        contacts: [{ input: '5511912345678', wa_id: '551112345678' }],
        messages: [{ id: 'wamid.brazil-out-1' }],
      },
    });
    const res = await start({
      connectionId: whatsapp.id,
      to: '+55 11 91234-5678',
      template: { name: 'order_update', language: 'en_US', parameters: { header: ['#8'], body: ['Ana', '#8'] } },
    });
    expect(res.statusCode, res.body).toBe(202);
    const { thread, message } = res.json().data;
    expect((await settled(message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.path.endsWith('/messages'))?.parsed).toMatchObject({ to: '5511912345678' });
    fake.reset();
    const contacts = await count('contacts');
    expect((await inbound.whatsapp!('551112345678', 'wamid.brazil-in-1')).thread_id).toBe(thread.id);
    expect(await count('contacts')).toBe(contacts);
    const handles = await handlesOf(thread.contactId);
    expect(handles).toEqual(
      expect.arrayContaining([
        { integration_key: 'whatsapp', external_id: '5511912345678' },
        { integration_key: 'whatsapp', external_id: '551112345678' },
      ]),
    );
    // Written to again as the business first wrote it: the same contact and thread.
    const again = await start({ connectionId: whatsapp.id, to: '+5511912345678', text: 'Obrigado!' });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().data.thread.id).toBe(thread.id);
    expect((await settled(again.json().data.message.id)).status).toBe('sent');
  });

  it("WhatsApp Cloud: Mexico's wa_id with the 1 after 52 (521…) is a WhatsApp id to write to", async () => {
    // WhatsApp still knows Mexican mobiles as 521 + ten digits, a form the numbering plan
    // dropped in 2019: the ids its own webhooks carry must be ones a conversation can start to.
    await syncTemplates();
    const template = { name: 'order_update', language: 'en_US', parameters: { header: ['#9'], body: ['Luis', '#9'] } };
    const res = await start({ connectionId: whatsapp.id, to: '5215512345678', template });
    expect(res.statusCode, res.body).toBe(202);
    const { thread, message } = res.json().data;
    expect(await handlesOf(thread.contactId)).toEqual([{ integration_key: 'whatsapp', external_id: '5215512345678' }]);
    expect((await settled(message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.path.endsWith('/messages'))?.parsed).toMatchObject({ to: '5215512345678' });
    expect((await inbound.whatsapp!('5215512345678', 'wamid.mexico-in-1')).thread_id).toBe(thread.id);
    // Written with a +, spaces and dashes: the same contact and thread.
    const again = await start({ connectionId: whatsapp.id, to: '+52 1 55-1234-5678', text: 'Gracias' });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().data.thread.id).toBe(thread.id);
    expect((await settled(again.json().data.message.id)).status).toBe('sent');
  });

  it('WhatsApp Cloud: writing with the ninth digit to a Brazilian who wrote without it joins their thread', async () => {
    // WhatsApp knows some Brazilian mobiles without the ninth digit (their messages come from
    // 55 11 1234-5678); the business writes the number as people say it, with the 9.
    const wrote = await inbound.whatsapp!('551187654321', 'wamid.brazil-in-2');
    const contacts = await count('contacts');
    const res = await start({ connectionId: whatsapp.id, to: '+55 11 98765-4321', text: 'Olá!' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.thread.id).toBe(wrote.thread_id);
    expect(await count('contacts')).toBe(contacts);
    expect((await settled(res.json().data.message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.path.endsWith('/messages'))?.parsed).toMatchObject({ to: '551187654321' });
  });

  it('WhatsApp Cloud: a Brazilian landline written to is never taken for the mobile with a 9 before it', async () => {
    // 55 11 3456-7890 is a landline; 55 11 93456-7890 is somebody's mobile, not the same person.
    await syncTemplates();
    const mobile = await inbound.whatsapp!('5511934567890', 'wamid.brazil-mobile-1');
    const res = await start({
      connectionId: whatsapp.id,
      to: '+55 11 3456-7890',
      template: { name: 'order_update', language: 'en_US', parameters: { header: ['#7'], body: ['Bia', '#7'] } },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.thread.id).not.toBe(mobile.thread_id);
    expect((await settled(res.json().data.message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.path.endsWith('/messages'))?.parsed).toMatchObject({ to: '551134567890' });
    expect(await handlesOf(res.json().data.thread.contactId)).toEqual([{ integration_key: 'whatsapp', external_id: '551134567890' }]);
  });

  it('WhatsApp Cloud: free text once the contact wrote (window open) goes to their thread', async () => {
    const wrote = await inbound.whatsapp!('14155550145', 'wamid.start-2');
    const res = await start({ connectionId: whatsapp.id, to: '14155550145', text: 'Thanks for writing!' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.thread.id).toBe(wrote.thread_id);
    expect((await settled(res.json().data.message.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.provider === 'whatsapp')?.parsed).toMatchObject({
      to: '14155550145',
      type: 'text',
      text: { body: 'Thanks for writing!' },
    });
  });
});

/** Uploads a file through the real route and answers its id. */
async function upload(filename: string, bytes: Buffer, contentType: string): Promise<number> {
  return (await uploadFile(ctx.app, tenant.headers, { filename, contentType, bytes })).id;
}

describe('POST /v1/conversations with attachmentIds', () => {
  it('e-mail: the first message carries the uploaded files as MIME parts, the text their caption', async () => {
    const invoice = Buffer.from('%PDF-1.4\n% an invoice\n');
    const ids = [await upload('invoice.pdf', invoice, 'application/pdf'), await upload('dot.png', PNG_1X1, 'image/png')];
    const res = await start({ connectionId: email.id, to: 'mara@example.org', text: 'Your invoice, as promised.', attachmentIds: ids });
    expect(res.statusCode, res.body).toBe(202);
    const { message } = res.json().data;
    expect(message.attachments.map((a: { id: number; messageId: number }) => [a.id, a.messageId])).toEqual(
      ids.map((id) => [id, message.id]),
    );
    expect((await settled(message.id)).status).toBe('sent');
    const mail = smtp.mails[0]!.mail;
    expect(mail.text?.trim()).toBe('Your invoice, as promised.');
    expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content])).toEqual([
      ['invoice.pdf', 'application/pdf', invoice],
      ['dot.png', 'image/png', PNG_1X1],
    ]);
  });

  it('files alone are a message; the thread preview names them', async () => {
    const id = await upload('dot.png', PNG_1X1, 'image/png');
    const res = await start({ connectionId: email.id, to: 'nils@example.org', attachmentIds: [id] });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.message).toMatchObject({ text: '', attachments: [{ id, kind: 'image' }] });
    expect(res.json().data.thread.lastMessagePreview).toBe('[image]');
    await settled(res.json().data.message.id);
    expect(smtp.mails[0]!.mail.subject).toBe('A file for you');
  });

  it.each([
    ['a channel that cannot send files', () => aggregator.id, 'cannot send files'],
    ['more files than the channel carries', () => sms.id, 'one attachment'],
  ])('refuses %s, writing nothing and leaving the uploads unused', async (_what, connectionId, says) => {
    const ids = [await upload('a.png', PNG_1X1, 'image/png'), await upload('b.png', PNG_1X1, 'image/png')];
    const before = await Promise.all([count('contacts'), count('threads'), count('messages')]);
    const res = await start({
      connectionId: connectionId(),
      to: '+14155550150',
      text: 'Hi',
      attachmentIds: connectionId() === sms.id ? ids : ids.slice(0, 1),
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.message).toContain(says);
    expect(await Promise.all([count('contacts'), count('threads'), count('messages')])).toEqual(before);
    const rows = await ctx.deps.db.selectFrom('attachments').select('message_id').where('id', 'in', ids).execute();
    expect(rows.map((r) => r.message_id)).toEqual([null, null]);
  });

  it('refuses a template with files', async () => {
    const id = await upload('a.png', PNG_1X1, 'image/png');
    const res = await start({
      connectionId: whatsapp.id,
      to: '+14155550151',
      template: { name: 'order_update', language: 'en_US', parameters: { body: ['1'] } },
      attachmentIds: [id],
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.message).toContain('a template is sent alone');
  });
});

describe('POST /v1/conversations refusals', async () => {
  const other = await makeTenant(ctx.deps);
  const foreign = await makeConnection(ctx.deps, other.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550999' });
  const messenger = await conn('social_one.native', 'page-1');
  const livechat = await conn('livechat', 'widget-1');
  const ai = await conn('ai', 'ai-1');

  const cases: [string, () => Record<string, unknown>, number, string][] = [
    [
      'free text on WhatsApp Cloud to someone who never wrote',
      () => ({ connectionId: whatsapp.id, to: '+14155550146', text: 'Hi' }),
      422,
      'window_closed',
    ],
    ['an unparseable number', () => ({ connectionId: sms.id, to: '415-CALL-NOW', text: 'Hi' }), 422, '"415-CALL-NOW"'],
    ['an SMS number without its country code', () => ({ connectionId: sms.id, to: '4155550142', text: 'Hi' }), 422, 'E.164'],
    [
      'a number too short',
      () => ({ connectionId: whatsapp.id, to: '+1415', template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } }),
      422,
      'not a phone number',
    ],
    [
      'an e-mail address that is not one',
      () => ({ connectionId: email.id, to: 'Dana <dana@example.org>', text: 'Hi' }),
      422,
      'is not an e-mail address',
    ],
    [
      'Messenger',
      () => ({ connectionId: messenger.id, to: '1234567890', text: 'Hi' }),
      422,
      'social_one.native cannot start a conversation',
    ],
    ['live chat', () => ({ connectionId: livechat.id, to: 'visitor', text: 'Hi' }), 422, 'livechat cannot start a conversation'],
    ['the AI channel', () => ({ connectionId: ai.id, to: 'x', text: 'Hi' }), 422, 'this channel cannot send'],
    [
      'a template on a channel without templates',
      () => ({ connectionId: sms.id, to: '+14155550142', template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } }),
      422,
      'templates can only be sent on whatsapp',
    ],
    [
      'an unknown template',
      () => ({ connectionId: whatsapp.id, to: '+14155550146', template: { name: 'nope', language: 'en_US', parameters: { body: [] } } }),
      422,
      'template "nope" (en_US)',
    ],
    [
      'text and template together',
      () => ({
        connectionId: sms.id,
        to: '+14155550142',
        text: 'Hi',
        template: { name: 'welcome', language: 'en_US', parameters: { body: [] } },
      }),
      422,
      'exactly one of',
    ],
    ['neither text nor template', () => ({ connectionId: sms.id, to: '+14155550142' }), 422, 'exactly one of'],
    ['an unknown field', () => ({ connectionId: sms.id, to: '+14155550142', text: 'Hi', subject: 'x' }), 422, 'subject'],
    ['a connection of another workspace', () => ({ connectionId: foreign.id, to: '+14155550142', text: 'Hi' }), 404, 'connection'],
  ];
  it.each(cases)('refuses %s, writing nothing', async (_what, body, status, says) => {
    const before = await Promise.all([count('contacts'), count('threads'), count('messages')]);
    const res = await start(body());
    expect(res.statusCode, res.body).toBe(status);
    const { code, message } = res.json().error;
    expect(`${code}: ${message}`).toContain(says);
    expect(await Promise.all([count('contacts'), count('threads'), count('messages')])).toEqual(before);
  });

  it('needs the write scope', async () => {
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: { ...reader.headers, 'content-type': 'application/json' },
      payload: { connectionId: sms.id, to: '+14155550142', text: 'Hi' },
    });
    expect(res.statusCode).toBe(403);
  });
});

describe('POST /v1/conversations with an Idempotency-Key', () => {
  it('answers a replay with the same status, thread and message, and sends once', async () => {
    const body = { connectionId: sms.id, to: '+14155550147', text: 'Order #9 is ready.' };
    const first = await start(body, { 'idempotency-key': 'start-1' });
    const second = await start(body, { 'idempotency-key': 'start-1' });
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(second.json().data).toEqual(first.json().data);
    await settled(first.json().data.message.id);
    expect(fake.requests.filter((r) => r.provider === 'sms')).toHaveLength(1);
    const other = await start({ ...body, text: 'Something else' }, { 'idempotency-key': 'start-1' });
    expect(other.statusCode).toBe(409);
  });

  it('answers two concurrent duplicates with one contact, thread and message, sent once', async () => {
    const body = { connectionId: aggregator.id, to: '+14155550148', text: 'Your parcel is out for delivery.' };
    const before = await Promise.all([count('contacts'), count('threads'), count('messages')]);
    const [a, b] = await Promise.all([start(body, { 'idempotency-key': 'start-2' }), start(body, { 'idempotency-key': 'start-2' })]);
    expect([a.statusCode, b.statusCode]).toEqual([202, 202]);
    expect(b.json().data.message.id).toBe(a.json().data.message.id);
    expect(b.json().data.thread.id).toBe(a.json().data.thread.id);
    expect(await Promise.all([count('contacts'), count('threads'), count('messages')])).toEqual(before.map((n) => n + 1));
    await settled(a.json().data.message.id);
    expect(fake.requests.filter((r) => r.provider === 'aggregator')).toHaveLength(1);
  });

  it('without a key, a second start to the same person reuses the contact and thread', async () => {
    const body = { connectionId: sms.id, to: '+14155550149', text: 'First' };
    const a = (await start(body)).json().data;
    const b = (await start({ ...body, to: '+1 415 555 0149', text: 'Second' })).json().data;
    expect(b.thread.id).toBe(a.thread.id);
    expect(b.thread.contactId).toBe(a.thread.contactId);
    expect(b.message.id).not.toBe(a.message.id);
  });
});
