import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeProviders, startFakeProviders } from '../../harness/fake-providers.js';
import { type FakeSmtp, startSmtpServer } from '../../harness/smtp.js';
import { buildApp } from '../../src/app.js';
import { errors } from '../../src/http/errors.js';
import type { NewInboxRow } from '../../src/webhooks-in/inbox.queries.js';
import { InboxWriter } from '../../src/webhooks-in/inbox-writer.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, waitFor } from '../helpers/webhooks.js';

const POSTMARK_SECRET = 'postmark-basic-auth-secret-01';
const MAILGUN_KEY = 'mailgun-signing-key-0123456789';
const PUBLIC_URL = 'https://inbox.example.test/base';

const fake: FakeProviders = await startFakeProviders();
const smtp: FakeSmtp = await startSmtpServer();
afterAll(async () => {
  await fake.close();
  await smtp.close();
});
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  workers: true,
  logLines,
  env: {
    INBOX_PUBLIC_URL: `${PUBLIC_URL}/`,
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      'email.postmark': { webhookSecret: POSTMARK_SECRET },
      'email.mailgun': { webhookSecret: MAILGUN_KEY },
      email: { webhookSecret: 'plain-mail-secret' },
      telegram: { apiBaseUrl: fake.baseUrls.telegram },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const rowCount = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('webhook_inbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const post = (key: string, payload: string | Buffer, headers: Record<string, string>) =>
  ctx.app.inject({ method: 'POST', url: `/webhooks/${key}`, headers, payload });
/** The inbound message with this provider id, once the worker has applied it. */
const messageWithId = (externalId: string) =>
  waitFor(
    () => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(),
    `message ${externalId}`,
  );

/** Mailgun's signed fields (hex HMAC-SHA256 of timestamp + token), computed here independently. */
function mailgunFields(timestamp = Math.floor(Date.now() / 1000), token = randomBytes(25).toString('hex')) {
  const signature = createHmac('sha256', MAILGUN_KEY).update(`${timestamp}${token}`).digest('hex');
  return { timestamp: String(timestamp), token, signature };
}
function mailgunForm(fields: Record<string, string>, overrides: Record<string, string> = {}): string {
  const params = new URLSearchParams(fixture('email.mailgun', 'inbound.form'));
  for (const [k, v] of Object.entries({ ...overrides, ...fields })) params.set(k, v);
  return params.toString();
}
async function mailgunMultipart(fields: Record<string, string>, overrides: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of new URLSearchParams(mailgunForm(fields, overrides))) form.append(k, v);
  form.append('attachment-1', new Blob([randomBytes(2048)], { type: 'image/jpeg' }), 'receipt.jpg');
  const res = new Response(form);
  return { body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type')! };
}

describe('email.postmark', () => {
  const inbound = fixture('email.postmark', 'inbound.json');
  it('refuses a wrong or missing basic auth with 401 invalid_api_key and stores nothing', async () => {
    const before = await rowCount();
    for (const authorization of [basic('postmark', 'nope'), basic('admin', POSTMARK_SECRET), undefined]) {
      const res = await post('email.postmark', inbound, {
        'content-type': 'application/json',
        ...(authorization ? { authorization } : {}),
      });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_api_key');
    }
    expect(await rowCount()).toBe(before);
  });

  it('takes a stream into a thread, replies over SMTP in that thread; a stranger naming its Message-ID gets a thread of their own', async () => {
    const connection = await makeConnection(ctx.deps, ws, {
      integrationKey: 'email.postmark',
      externalAccountId: 'support@acme.test',
      credentials: { smtpUrl: smtp.url },
    });
    const first = JSON.parse(fixture('email.postmark', 'reply.json'));
    first.Headers = [{ Name: 'Message-ID', Value: '<first-mail@mail.example.org>' }];
    first.Subject = 'Invoice question';
    const res = await post('email.postmark', JSON.stringify(first), {
      'content-type': 'application/json',
      authorization: basic('postmark', POSTMARK_SECRET),
    });
    expect(res.json()).toEqual({ status: 'queued' });
    const received = await messageWithId('<first-mail@mail.example.org>');
    // The quoted history is cut from the text; the raw body keeps it.
    expect(received.text).toBe('Thanks, that fixed it!\n\nDana');
    expect(received.email?.subject).toBe('Invoice question');
    const row = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select('raw_body')
      .where('integration_key', '=', 'email.postmark')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(row.raw_body).toContain('We removed the duplicate line item.');

    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${received.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'Glad it works.' },
    });
    expect(reply.statusCode).toBe(202);
    const sent = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('messages')
          .selectAll()
          .where('id', '=', reply.json().data.id)
          .where('status', '=', 'sent')
          .executeTakeFirst(),
      'the reply sent',
    );
    const mail = smtp.mails.at(-1)!;
    expect(mail.mail.inReplyTo).toBe('<first-mail@mail.example.org>');
    expect(mail.mail.subject).toBe('Re: Invoice question');

    // Another address names the service's reply in In-Reply-To and References: a Message-ID is
    // no credential, so the mail opens a thread of its sender's rather than joining Dana's.
    const stranger = JSON.parse(fixture('email.postmark', 'reply.json').replaceAll('<REPLACED_BY_TEST@acme.test>', sent.external_id!));
    stranger.FromFull = { Email: 'sam@example.org', Name: 'Sam', MailboxHash: '' };
    stranger.Headers[0].Value = '<stranger@mail.example.org>';
    await post('email.postmark', JSON.stringify(stranger), {
      'content-type': 'application/json',
      authorization: basic('postmark', POSTMARK_SECRET),
    });
    const strangers = await messageWithId('<stranger@mail.example.org>');
    expect(strangers.thread_id).not.toBe(received.thread_id);
    const own = await ctx.deps.db
      .selectFrom('threads')
      .select('contact_id')
      .where('id', '=', strangers.thread_id)
      .executeTakeFirstOrThrow();
    const handle = await ctx.deps.db.selectFrom('contact_handles').select('external_id').where('contact_id', '=', own.contact_id).execute();
    expect(handle.map((h) => h.external_id)).toEqual(['sam@example.org']);

    // Dana's own answer naming the same reply stays in her thread.
    const again = JSON.parse(fixture('email.postmark', 'reply.json').replaceAll('<REPLACED_BY_TEST@acme.test>', sent.external_id!));
    again.Headers[0].Value = '<dana-again@mail.example.org>';
    await post('email.postmark', JSON.stringify(again), {
      'content-type': 'application/json',
      authorization: basic('postmark', POSTMARK_SECRET),
    });
    expect((await messageWithId('<dana-again@mail.example.org>')).thread_id).toBe(received.thread_id);
    expect(connection.integrationKey).toBe('email.postmark');
  });
});

describe('email (the neutral key) threading', () => {
  const mail = (messageId: string, from: string, inReplyTo: string) =>
    post(
      'email',
      JSON.stringify({
        type: 'inbound',
        messageId,
        from: { email: from },
        to: 'help@acme.test',
        subject: 'Re: hello',
        text: 'Yes please.\n\nOn Mon, Acme wrote:\n> hello',
        inReplyTo,
        references: [`<${inReplyTo}>`],
      }),
      { 'content-type': 'application/json', 'x-vendor-auth': 'plain-mail-secret' },
    );

  it("joins the thread its inReplyTo names only when the sender is that thread's contact", async () => {
    const connection = await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'help@acme.test' });
    // The service wrote to no one yet: that thread's contact has no address, so nobody joins it.
    const out = await makeOutboundMessage(ctx.deps, connection, '<sent-by-inbox@acme.test>');
    expect((await mail('<neutral-reply@example.org>', 'someone.else@example.org', 'sent-by-inbox@acme.test')).statusCode).toBe(200);
    const m = await messageWithId('<neutral-reply@example.org>');
    expect(m.thread_id).not.toBe(out.thread_id);
    expect(m.text).toBe('Yes please.');

    // The service answers in that sender's thread; the sender's reply naming it joins it, a
    // stranger's naming it does not.
    await ctx.deps.db
      .insertInto('messages')
      .values({
        workspace_id: ws,
        thread_id: m.thread_id,
        connection_id: connection.id,
        direction: 'outbound',
        external_id: '<answer@acme.test>',
        text: 'Done.',
        status: 'sent',
      })
      .execute();
    await mail('<mallory@example.net>', 'mallory@example.net', 'answer@acme.test');
    await mail('<someone-again@example.org>', 'someone.else@example.org', 'answer@acme.test');
    expect((await messageWithId('<mallory@example.net>')).thread_id).not.toBe(m.thread_id);
    expect((await messageWithId('<someone-again@example.org>')).thread_id).toBe(m.thread_id);
  });
});

describe('a mail connection whose address is written with capitals', () => {
  it('keeps it in lower case and receives the mail sent to it, however the sender writes it', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/connections',
      headers: tenant.headers,
      payload: { integrationKey: 'email', externalAccountId: ' Sales@Acme.test', name: 'Sales' },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.externalAccountId).toBe('sales@acme.test');
    const postmark = await makeConnection(ctx.deps, ws, { integrationKey: 'email.postmark', externalAccountId: 'Orders@Acme.test' });
    expect(postmark.externalAccountId).toBe('orders@acme.test');

    const neutral = JSON.stringify({
      type: 'inbound',
      messageId: '<caps-1@example.org>',
      from: { email: 'ann@example.org' },
      to: 'Sales@Acme.test',
      text: 'Hello',
    });
    expect((await post('email', neutral, { 'content-type': 'application/json', 'x-vendor-auth': 'plain-mail-secret' })).statusCode).toBe(
      200,
    );
    const pm = JSON.stringify({
      FromFull: { Email: 'bob@example.org' },
      OriginalRecipient: 'ORDERS@acme.test',
      ToFull: [{ Email: 'ORDERS@acme.test' }],
      MessageID: 'caps-2',
      TextBody: 'Hi',
    });
    expect(
      (await post('email.postmark', pm, { 'content-type': 'application/json', authorization: basic('postmark', POSTMARK_SECRET) }))
        .statusCode,
    ).toBe(200);
    expect((await messageWithId('<caps-1@example.org>')).connection_id).toBe(created.json().data.id);
    expect((await messageWithId('caps-2')).connection_id).toBe(postmark.id);
  });
});

describe('email.mailgun', () => {
  it('accepts a signed multipart post once; a replayed token or a stale timestamp is 401 with nothing stored', async () => {
    const connection = await makeConnection(ctx.deps, ws, { integrationKey: 'email.mailgun', externalAccountId: 'support@acme.test' });
    const out = await makeOutboundMessage(ctx.deps, connection, '<outbound-1@acme.test>');
    const fields = mailgunFields();
    const { body, contentType } = await mailgunMultipart(fields);
    const res = await post('email.mailgun', body, { 'content-type': contentType });
    expect(res.json()).toEqual({ status: 'queued' });
    const m = await messageWithId('<517ACC75.5010709@example.com>');
    expect(m.text).toBe('Warm regards, this is the answer.');
    // Its In-Reply-To names the service's message, but in another contact's thread.
    expect(m.thread_id).not.toBe(out.thread_id);

    const before = await rowCount();
    const replay = await post('email.mailgun', body, { 'content-type': contentType });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.code).toBe('invalid_api_key');
    const stale = mailgunFields(Math.floor(Date.now() / 1000) - 301);
    const old = await post('email.mailgun', mailgunForm(stale, { 'Message-Id': '<stale@example.com>' }), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(old.statusCode).toBe(401);
    expect(await rowCount()).toBe(before);
  });

  it('refuses malformed and truncated bodies with a 4xx, never a 500', async () => {
    const { body, contentType } = await mailgunMultipart(mailgunFields(), { 'Message-Id': '<truncated@example.com>' });
    for (const [payload, type] of [
      [body.subarray(0, body.length - 30), contentType],
      [Buffer.from('--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n'), 'multipart/form-data; boundary=b'],
      [Buffer.from('%%%=&&='), 'application/x-www-form-urlencoded'],
      [Buffer.from('{"json": true}'), 'application/json'],
    ] as const) {
      const res = await post('email.mailgun', payload, { 'content-type': type });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
  });

  it('gives a claimed token back when the delivery is not stored, so the provider’s retry passes', async () => {
    class RefusingWriter extends InboxWriter {
      override write(_row: NewInboxRow): Promise<void> {
        return Promise.reject(errors.unavailable('too many deliveries are waiting to be stored; retry shortly', 1));
      }
    }
    const refusing = await buildApp(ctx.deps, { inboxWriter: new RefusingWriter(ctx.deps) });
    await refusing.ready();
    try {
      const body = mailgunForm(mailgunFields(), { 'Message-Id': '<retried@example.com>' });
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      expect((await refusing.inject({ method: 'POST', url: '/webhooks/email.mailgun', headers, payload: body })).statusCode).toBe(503);
      expect((await post('email.mailgun', body, headers)).statusCode).toBe(200);
    } finally {
      await refusing.close();
    }
  });
});

describe('RFC 2047 encoded words from Mailgun and Postmark', () => {
  const contactOf = async (threadId: number) =>
    ctx.deps.db
      .selectFrom('threads')
      .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
      .select('contacts.name')
      .where('threads.id', '=', threadId)
      .executeTakeFirstOrThrow();

  it("decodes Mailgun's message-headers: Subject, the sender's name and Cc names", async () => {
    await makeConnection(ctx.deps, ws, { integrationKey: 'email.mailgun', externalAccountId: 'encoded@acme.test' });
    const headers = [
      ['Message-Id', '<encoded-1@example.com>'],
      ['From', '=?UTF-8?B?w4lsb2RpZQ==?= =?UTF-8?B?IETDvHBvbnQ=?= <elodie@example.com>'],
      ['Subject', '=?ISO-8859-1?Q?Caf=E9_cr=E8me?= order'],
      ['Cc', '=?UTF-8?Q?Bj=C3=B6rn?= <bjorn@example.com>'],
    ];
    const params = new URLSearchParams(
      mailgunForm(mailgunFields(), { recipient: 'encoded@acme.test', 'message-headers': JSON.stringify(headers) }),
    );
    for (const name of ['from', 'subject', 'Message-Id', 'In-Reply-To', 'References']) params.delete(name);
    const res = await post('email.mailgun', params.toString(), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.json()).toEqual({ status: 'queued' });
    const m = await messageWithId('<encoded-1@example.com>');
    expect(m.email).toMatchObject({
      subject: 'Café crème order',
      from: { email: 'elodie@example.com', name: 'Élodie Düpont' },
      cc: [{ email: 'bjorn@example.com', name: 'Björn' }],
    });
    expect((await contactOf(m.thread_id)).name).toBe('Élodie Düpont');
  });

  it("decodes Postmark's Subject and names written as encoded words", async () => {
    await makeConnection(ctx.deps, ws, { integrationKey: 'email.postmark', externalAccountId: 'encoded-pm@acme.test' });
    const mail = JSON.parse(fixture('email.postmark', 'inbound.json'));
    mail.OriginalRecipient = 'encoded-pm@acme.test';
    mail.Headers = [{ Name: 'Message-ID', Value: '<encoded-pm@example.com>' }];
    mail.Subject = '=?UTF-8?B?w4l0w6kgMjAyNg==?=';
    mail.FromFull = { Email: 'kim@example.com', Name: '=?UTF-8?Q?Kim_J=C3=B8rgensen?=' };
    const res = await post('email.postmark', JSON.stringify(mail), {
      'content-type': 'application/json',
      authorization: basic('postmark', POSTMARK_SECRET),
    });
    expect(res.json()).toEqual({ status: 'queued' });
    const m = await messageWithId('<encoded-pm@example.com>');
    expect(m.email).toMatchObject({ subject: 'Été 2026', from: { email: 'kim@example.com', name: 'Kim Jørgensen' } });
    expect((await contactOf(m.thread_id)).name).toBe('Kim Jørgensen');
  });
});

describe('telegram', () => {
  const BOT_ID = '7000001';
  const BOT_TOKEN = `${BOT_ID}:AAH-test-bot-token-0123456789`;
  let secret = '';

  it('POST /v1/connections/:id/telegram/webhook sets a new secret with setWebhook at the public URL', async () => {
    const connection = await makeConnection(ctx.deps, ws, {
      integrationKey: 'telegram',
      externalAccountId: BOT_ID,
      credentials: { accessToken: BOT_TOKEN },
    });
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/connections/${connection.id}/telegram/webhook`,
      headers: tenant.headers,
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ connectionId: connection.id, url: `${PUBLIC_URL}/webhooks/telegram` });
    const call = fake.requests.find((r) => r.path === `/telegram/bot${BOT_TOKEN}/setWebhook`)!;
    const sent = call.parsed as { url: string; secret_token: string };
    expect(sent.url).toBe(`${PUBLIC_URL}/webhooks/telegram`);
    expect(sent.secret_token).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
    secret = sent.secret_token;
    // Stored hashed only.
    const stored = await ctx.deps.db.selectFrom('telegram_webhook_secrets').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(secret);

    // A read key may not; another kind of connection has no Telegram webhook.
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    const readerConn = await makeConnection(ctx.deps, reader.workspace.id, {
      integrationKey: 'telegram',
      externalAccountId: '1',
      credentials: { accessToken: '1:x' },
    });
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/connections/${readerConn.id}/telegram/webhook`,
          headers: reader.headers,
          payload: {},
        })
      ).statusCode,
    ).toBe(403);
    const other = await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'x@acme.test' });
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/connections/${other.id}/telegram/webhook`, headers: tenant.headers, payload: {} }))
        .statusCode,
    ).toBe(422);
  });

  it('a Telegram error answers 502 and keeps the previous secret working', async () => {
    const connection = await ctx.deps.db
      .selectFrom('connections')
      .select('id')
      .where('external_account_id', '=', BOT_ID)
      .executeTakeFirstOrThrow();
    fake.behave(`/telegram/bot${BOT_TOKEN}/setWebhook`, { status: 401, body: { ok: false, error_code: 401, description: 'Unauthorized' } });
    try {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/v1/connections/${connection.id}/telegram/webhook`,
        headers: tenant.headers,
        payload: {},
      });
      expect(res.statusCode).toBe(502);
      expect(res.json().error.message).toContain('Unauthorized');
      expect(res.body).not.toContain(BOT_TOKEN);
    } finally {
      fake.reset();
    }
  });

  it('two calls at once: the secret kept is the one Telegram was given last', async () => {
    const connection = await ctx.deps.db
      .selectFrom('connections')
      .select('id')
      .where('external_account_id', '=', BOT_ID)
      .executeTakeFirstOrThrow();
    const path = `/telegram/bot${BOT_TOKEN}/setWebhook`;
    const calls = () => fake.requests.filter((r) => r.path === path);
    let release!: () => void;
    fake.behave(path, { heldUntil: new Promise<void>((resolve) => (release = resolve)) });
    try {
      const call = () =>
        ctx.app.inject({ method: 'POST', url: `/v1/connections/${connection.id}/telegram/webhook`, headers: tenant.headers, payload: {} });
      const before = calls().length;
      const first = call();
      await waitFor(async () => calls().length > before, 'the first setWebhook held by Telegram');
      fake.behave(path, 'ok');
      const second = call();
      // The second reaches Telegram and comes back while the first is held, or waits for it.
      const waiting = async () =>
        Number(
          (await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`.execute(ctx.deps.db))
            .rows[0]!.n,
        );
      await waitFor(async () => calls().length > before + 1 || (await waiting()) > 0, 'the second call under way');
      release();
      expect((await first).statusCode).toBe(200);
      expect((await second).statusCode).toBe(200);
      const last = (calls().at(-1)!.parsed as { secret_token: string }).secret_token;
      const stored = await ctx.deps.db
        .selectFrom('telegram_webhook_secrets')
        .select('secret_hash')
        .where('connection_id', '=', connection.id)
        .executeTakeFirstOrThrow();
      expect(stored.secret_hash).toBe(createHash('sha256').update(last).digest('hex'));
      secret = last; // the bot's secret from now on
    } finally {
      release();
      fake.reset();
    }
  });

  it('an update whose secret matches no connection is 401 with nothing stored', async () => {
    const before = await rowCount();
    for (const headers of [{ 'x-telegram-bot-api-secret-token': 'not-the-secret' }, {}] as Record<string, string>[]) {
      const res = await post('telegram', fixture('telegram', 'message.json'), { 'content-type': 'application/json', ...headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_api_key');
    }
    expect(await rowCount()).toBe(before);
  });

  it('takes updates named by their secret and replies with sendMessage', async () => {
    for (const name of ['message.json', 'photo.json']) {
      const res = await post('telegram', fixture('telegram', name), {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': secret,
      });
      expect(res.json()).toEqual({ status: 'queued' });
    }
    const photo = await messageWithId('1111111:1366');
    expect(photo.text).toBe('The broken hinge');
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${photo.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'We will send a new one.' },
    });
    expect(reply.statusCode).toBe(202);
    const sent = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('messages')
          .selectAll()
          .where('id', '=', reply.json().data.id)
          .where('status', '=', 'sent')
          .executeTakeFirst(),
      'the telegram reply sent',
    );
    const call = fake.requests.find((r) => r.path === `/telegram/bot${BOT_TOKEN}/sendMessage`)!;
    expect(call.parsed).toEqual({ chat_id: '1111111', text: 'We will send a new one.' });
    expect(sent.external_id).toMatch(/^1111111:\d+$/);
  });
  it('names a location or a poll in the text; skips service messages and the edits that move a live location', async () => {
    const group = { id: -4001001, title: 'Support group', type: 'group' };
    const person = { id: 2222222, is_bot: false, first_name: 'Ada' };
    const updates = [
      {
        update_id: 20001,
        message: { message_id: 5, from: person, chat: group, date: 1441645532, location: { latitude: 52.5, longitude: 13.4 } },
      },
      {
        update_id: 20002,
        message: { message_id: 6, from: person, chat: group, date: 1441645533, poll: { id: 'p1', question: 'When?', options: [] } },
      },
      { update_id: 20003, message: { message_id: 7, from: person, chat: group, date: 1441645534, new_chat_members: [person] } },
      {
        update_id: 20004,
        message: { message_id: 8, from: person, chat: group, date: 1441645535, pinned_message: { message_id: 5, chat: group, date: 1 } },
      },
    ];
    const ids: string[] = [];
    for (const update of updates) {
      const before = new Set((await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id));
      const res = await post('telegram', JSON.stringify(update), {
        'content-type': 'application/json',
        'x-telegram-bot-api-secret-token': secret,
      });
      expect(res.json()).toEqual({ status: 'queued' });
      ids.push((await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id).find((id) => !before.has(id))!);
    }
    expect((await messageWithId('-4001001:5')).text).toBe('[location]');
    expect((await messageWithId('-4001001:6')).text).toBe('[poll]');
    const rows = await waitFor(async () => {
      const found = await ctx.deps.db.selectFrom('webhook_inbox').select(['status', 'last_error']).where('id', 'in', ids).execute();
      return found.every((r) => r.status === 'processed') && found;
    }, 'the telegram updates processed');
    expect(rows).toHaveLength(4);
    // A shared live location moves by edits of its message, with no text: none becomes a message.
    const moved = {
      update_id: 20005,
      edited_message: {
        message_id: 5,
        from: person,
        chat: group,
        date: 1441645532,
        edit_date: 1441645600,
        location: { latitude: 52.6, longitude: 13.5 },
      },
    };
    const before = new Set((await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id));
    expect(
      (await post('telegram', JSON.stringify(moved), { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret }))
        .statusCode,
    ).toBe(200);
    const movedId = (await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id).find((id) => !before.has(id))!;
    await waitFor(async () => {
      const row = await ctx.deps.db.selectFrom('webhook_inbox').select('status').where('id', '=', movedId).executeTakeFirstOrThrow();
      return row.status === 'processed';
    }, 'the live location edit processed');
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', 'like', '-4001001:5:edited:%').execute()).toEqual([]);
    const service = await ctx.deps.db
      .selectFrom('messages')
      .select('external_id')
      .where('external_id', 'in', ['-4001001:7', '-4001001:8'])
      .execute();
    expect(service).toEqual([]);
  });
});
