import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { VerifyContext } from '../../src/channels/channel.js';
import { readImapMail } from '../../src/channels/email-imap.js';
import { visibleReply } from '../../src/channels/email-inbound.js';
import { parseFormBody } from '../../src/channels/form-data.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { fixture } from '../helpers/webhooks.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const mailgunSignature = (key: string, timestamp: string, token: string) =>
  createHmac('sha256', key)
    .update(timestamp + token)
    .digest('hex');

/** A context whose token store and secret lookup are plain maps (the routes' are Postgres). */
function memoryContext(now = new Date(), secrets: Record<string, string> = {}): VerifyContext {
  const seen = new Set<string>();
  return {
    isKnownOutboundMessage: async () => false,
    now: () => now,
    claimOnce: async (key, token) => {
      if (seen.has(`${key}|${token}`)) return false;
      seen.add(`${key}|${token}`);
      return true;
    },
    accountBySecret: async (_key, secret) => secrets[secret],
  };
}

describe('email.postmark', () => {
  const body = fixture('email.postmark', 'inbound.json');
  const cfg = { webhookSecret: 'pm-secret-0123456789' };
  const verify = (authorization?: string, c: object = cfg) =>
    adapters['email.postmark'].verify(rawBodyOf(body), authorization ? { authorization } : {}, c, memoryContext());

  it('accepts basic auth postmark:<webhookSecret> and nothing else', async () => {
    expect(await verify(basic('postmark', cfg.webhookSecret))).toEqual({ ok: true, via: 'signed' });
    expect((await verify(basic('postmark', 'wrong'))).ok).toBe(false);
    expect((await verify(basic('other', cfg.webhookSecret))).ok).toBe(false);
    expect((await verify(basic('postmark', `${cfg.webhookSecret}x`))).ok).toBe(false);
    expect((await verify(`Bearer ${cfg.webhookSecret}`)).ok).toBe(false);
    expect((await verify('Basic !!!not-base64')).ok).toBe(false);
    expect((await verify(`Basic ${Buffer.from('postmark').toString('base64')}`)).ok).toBe(false);
    expect((await verify()).ok).toBe(false);
    expect((await verify(basic('postmark', cfg.webhookSecret), {})).ok).toBe(false);
  });

  it("normalises Postmark's documented example: account OriginalRecipient, its attachment read again from the delivery", () => {
    expect(adapters['email.postmark'].normalise(JSON.parse(body), { verification: 'signed' })).toEqual([
      {
        type: 'message',
        externalAccountId: 'yourhash+samplehash@inbound.postmarkapp.com',
        externalMessageId: '73e6d360-66eb-11e1-8e72-a8904824019b',
        contact: { externalId: 'support@postmarkapp.com', name: 'Postmarkapp Support' },
        text: 'This is a test text body.',
        occurredAt: new Date('2014-08-01T20:45:32Z'),
        email: {
          messageId: '73e6d360-66eb-11e1-8e72-a8904824019b',
          inReplyTo: null,
          from: { email: 'support@postmarkapp.com', name: 'Postmarkapp Support' },
          to: [{ email: 'yourhash+samplehash@inbound.postmarkapp.com', name: 'Firstname Lastname' }],
          cc: [{ email: 'firstcc@postmarkapp.com', name: 'First Cc' }, { email: 'secondcc@postmarkapp.com' }],
          subject: 'Test subject',
          references: [],
        },
        html: '<p>This is a test html body.</p>',
        attachments: [{ kind: 'file', contentType: 'text/plain', filename: 'test.txt', source: { from: 'delivery', index: 0 } }],
      },
    ]);
  });

  it('takes the Message-ID header as the id, cuts the quoted history, and lists what the mail answers', () => {
    const [event] = adapters['email.postmark'].normalise(JSON.parse(fixture('email.postmark', 'reply.json')), { verification: 'signed' });
    expect(event).toMatchObject({
      externalAccountId: 'support@acme.test',
      externalMessageId: '<CAB7r1Qq=dana-2@mail.example.org>',
      text: 'Thanks, that fixed it!\n\nDana',
      quotedText: expect.stringMatching(/^On Fri, Nov 20, 2026 .* wrote:\n> We removed the duplicate line item\./),
      email: {
        messageId: '<CAB7r1Qq=dana-2@mail.example.org>',
        inReplyTo: '<REPLACED_BY_TEST@acme.test>',
        subject: 'Re: Invoice question',
        references: ['<CAF=3Dx+8u1Zk2Q@mail.example.org>', '<REPLACED_BY_TEST@acme.test>'],
      },
      references: [
        '<REPLACED_BY_TEST@acme.test>',
        'REPLACED_BY_TEST@acme.test',
        '<CAF=3Dx+8u1Zk2Q@mail.example.org>',
        'CAF=3Dx+8u1Zk2Q@mail.example.org',
      ],
    });
  });
});

describe('email.mailgun', () => {
  const KEY = 'key-mailgun-signing-0123456789';
  const now = new Date();
  const ts = String(Math.floor(now.getTime() / 1000));
  const signedForm = (timestamp: string, token: string, signature = mailgunSignature(KEY, timestamp, token)) =>
    `${fixture('email.mailgun', 'inbound.form')}&timestamp=${timestamp}&token=${token}&signature=${signature}`;
  const verify = (body: string, ctx = memoryContext(now), cfg: object = { webhookSecret: KEY }) =>
    adapters['email.mailgun'].verify(rawBodyOf(body), {}, cfg, ctx);

  it('accepts the documented signature and hands over the parsed form', async () => {
    const body = signedForm(ts, 'a'.repeat(50));
    const result = await verify(body);
    expect(result).toMatchObject({ ok: true, via: 'signed' });
    expect(result.ok && result.payload).toEqual(parseFormBody(body));
  });

  it('refuses a wrong signature, a missing field, an unconfigured key', async () => {
    expect((await verify(signedForm(ts, 'b'.repeat(50), mailgunSignature('other', ts, 'b'.repeat(50))))).ok).toBe(false);
    expect((await verify(fixture('email.mailgun', 'inbound.form'))).ok).toBe(false);
    expect((await verify(signedForm(ts, 'c'.repeat(50)), memoryContext(now), {})).ok).toBe(false);
  });

  it('refuses a timestamp more than 5 minutes old or ahead, even correctly signed', async () => {
    const old = String(Number(ts) - 301);
    const ahead = String(Number(ts) + 301);
    expect((await verify(signedForm(old, 'd'.repeat(50)))).ok).toBe(false);
    expect((await verify(signedForm(ahead, 'e'.repeat(50)))).ok).toBe(false);
    expect((await verify(signedForm(String(Number(ts) - 299), 'f'.repeat(50)))).ok).toBe(true);
  });

  it('refuses a token used twice', async () => {
    const ctx = memoryContext(now);
    const body = signedForm(ts, 'g'.repeat(50));
    expect((await verify(body, ctx)).ok).toBe(true);
    expect(await verify(body, ctx)).toEqual({ ok: false, reason: 'token already used' });
  });

  it('normalises the documented fields: from header, recipient, visible reply, threading ids', () => {
    const payload = parseFormBody(fixture('email.mailgun', 'inbound.form'));
    expect(adapters['email.mailgun'].normalise(payload, { verification: 'signed' })).toEqual([
      {
        type: 'message',
        externalAccountId: 'support@acme.test',
        externalMessageId: '<517ACC75.5010709@example.com>',
        contact: { externalId: 'bob@example.com', name: 'Bob Builder' },
        text: 'Warm regards, this is the answer.',
        occurredAt: new Date('2026-11-16T10:05:00Z'),
        email: {
          messageId: '<517ACC75.5010709@example.com>',
          inReplyTo: '<outbound-1@acme.test>',
          from: { email: 'bob@example.com', name: 'Bob Builder' },
          to: [{ email: 'support@acme.test' }],
          cc: [],
          subject: 'Re: Sample POST request',
          references: ['<outbound-1@acme.test>'],
        },
        html: '<p>Warm regards, this is the answer.</p>',
        quotedText: '--\nBob Builder\n\nOn Mon, Nov 16, 2026 at 10:00 AM Acme <support@acme.test> wrote:\n> Hi Bob, does the parcel fit?',
        references: ['<outbound-1@acme.test>', 'outbound-1@acme.test'],
      },
    ]);
  });

  it('reads multipart bodies (attachment-N files as attachments) and refuses truncated or malformed ones', async () => {
    const form = new FormData();
    for (const [k, v] of new URLSearchParams(fixture('email.mailgun', 'inbound.form'))) form.append(k, v);
    form.append('attachment-1', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'photo.png');
    form.append('attachment-2', new Blob(['%PDF-1.4'], { type: 'application/pdf' }), 'invoice.pdf');
    const text = await new Response(form).text();
    const parsed = parseFormBody(text);
    expect(parsed?.files).toEqual([
      { field: 'attachment-1', filename: 'photo.png', contentType: 'image/png' },
      { field: 'attachment-2', filename: 'invoice.pdf', contentType: 'application/pdf' },
    ]);
    const [event] = adapters['email.mailgun'].normalise(parsed, { verification: 'signed' });
    expect(event).toMatchObject({
      text: 'Warm regards, this is the answer.',
      attachments: [
        { kind: 'image', contentType: 'image/png', filename: 'photo.png', source: { from: 'delivery', index: 0 } },
        { kind: 'file', contentType: 'application/pdf', filename: 'invoice.pdf', source: { from: 'delivery', index: 1 } },
      ],
    });
    expect(parseFormBody(text.slice(0, text.length - 40))).toBeUndefined();
    expect(parseFormBody('--xyz\r\nno header end\r\n--xyz--\r\n')).toBeUndefined();
    expect(parseFormBody('--\r\n')).toBeUndefined();
  });
});

describe('mail a machine sent (RFC 3834): marked automatic, so no away message answers it', () => {
  const postmark = (headers: { Name: string; Value: string }[], from = 'ada@example.com') => {
    const payload = JSON.parse(fixture('email.postmark', 'inbound.json'));
    payload.Headers = headers;
    payload.FromFull = { Email: from, Name: '' };
    const [event] = adapters['email.postmark'].normalise(payload, { verification: 'signed' });
    return event?.type === 'message' ? event.email?.automatic : 'not a message';
  };

  it('reads the headers Postmark forwards', () => {
    for (const [name, value] of [
      ['Auto-Submitted', 'auto-replied'],
      ['Auto-Submitted', 'auto-generated'],
      ['X-Autoreply', 'yes'],
      ['X-Autorespond', 'Out of office'],
      ['Precedence', 'bulk'],
      ['Precedence', 'List'],
      ['Precedence', 'auto_reply'],
      ['List-Id', '<news.example.com>'],
      ['Content-Type', 'multipart/report; report-type=delivery-status; boundary="b"'],
    ]) {
      expect(postmark([{ Name: name!, Value: value! }]), `${name}: ${value}`).toBe(true);
    }
    // A person's mail: none of them, or `Auto-Submitted: no`, `Precedence: first-class`.
    expect(postmark([])).toBeUndefined();
    expect(postmark([{ Name: 'Auto-Submitted', Value: 'no' }])).toBeUndefined();
    expect(postmark([{ Name: 'Precedence', Value: 'first-class' }])).toBeUndefined();
    // A mail server's own sender is a bounce, whatever its headers.
    expect(postmark([], 'MAILER-DAEMON@mx.example.com')).toBe(true);
    expect(postmark([], 'postmaster@example.com')).toBe(true);
  });

  it("reads Mailgun's message-headers", () => {
    const form = parseFormBody(fixture('email.mailgun', 'inbound.form')) as { fields: Record<string, string> };
    const headers = JSON.parse(form.fields['message-headers']!) as [string, string][];
    const automatic = (extra: [string, string][]) => {
      const [event] = adapters['email.mailgun'].normalise(
        { ...form, fields: { ...form.fields, 'message-headers': JSON.stringify([...headers, ...extra]) } },
        { verification: 'signed' },
      );
      return event?.type === 'message' ? event.email?.automatic : 'not a message';
    };
    expect(automatic([['Auto-Submitted', 'auto-replied']])).toBe(true);
    expect(automatic([])).toBeUndefined();
  });

  it("reads a mailbox mail's own headers, folded ones too", async () => {
    const raw = (headers: string) =>
      Buffer.from(
        `From: Ada <ada@example.com>\r\nTo: help@acme.test\r\nSubject: Away\r\nMessage-ID: <a@example.com>\r\n${headers}\r\nI am out of the office.\r\n`,
      );
    const read = async (headers: string) => {
      const payload = await readImapMail('help@acme.test', raw(headers));
      const [event] = adapters['email.imap'].normalise(payload, { verification: 'signed', account: 'help@acme.test' });
      return [payload.mail?.automatic, event?.type === 'message' ? event.email?.automatic : 'not a message'];
    };
    expect(await read('Auto-Submitted:\r\n auto-replied\r\n')).toEqual([true, true]);
    expect(await read('Precedence: junk\r\n')).toEqual([true, true]);
    expect(await read('Auto-Submitted: no\r\n')).toEqual([undefined, undefined]);
  });
});

describe('e-mail visible text', () => {
  it('cuts quoted history and a "-- " signature with email-reply-parser; a bare quotation stays whole', () => {
    expect(visibleReply('Sounds good.\r\n\r\n-- \r\nAda\r\nAcme Ltd\r\n\r\nOn Tue, Ada wrote:\r\n> earlier\r\n')).toBe('Sounds good.');
    expect(visibleReply('> only a quote')).toBe('> only a quote');
  });
});

describe('telegram', () => {
  const body = fixture('telegram', 'message.json');
  const ctx = memoryContext(new Date(), { 'secret-of-bot-1': '7000001' });
  const verify = (headers: Record<string, string>) => adapters.telegram.verify(rawBodyOf(body), headers, {}, ctx);
  const normalise = (name: string) =>
    adapters.telegram.normalise(JSON.parse(fixture('telegram', name)), { verification: 'signed', account: '7000001' });

  it('accepts a known secret token and names its bot; refuses an unknown, malformed or missing one', async () => {
    expect(await verify({ 'x-telegram-bot-api-secret-token': 'secret-of-bot-1' })).toEqual({ ok: true, via: 'signed', account: '7000001' });
    expect((await verify({ 'x-telegram-bot-api-secret-token': 'secret-of-bot-2' })).ok).toBe(false);
    expect((await verify({ 'x-telegram-bot-api-secret-token': 'has space' })).ok).toBe(false);
    expect((await verify({ 'x-telegram-bot-api-secret-token': 'x'.repeat(257) })).ok).toBe(false);
    expect((await verify({})).ok).toBe(false);
    expect(
      (
        await adapters.telegram.verify(
          rawBodyOf(body),
          { 'x-telegram-bot-api-secret-token': 'secret-of-bot-1' },
          {},
          { isKnownOutboundMessage: async () => false },
        )
      ).ok,
    ).toBe(false);
  });

  it('normalises text, photo, document, voice and edits; the chat is the contact', () => {
    expect(normalise('message.json')).toEqual([
      {
        type: 'message',
        externalAccountId: '7000001',
        externalMessageId: '1111111:1365',
        contact: { externalId: '1111111', name: 'Test Lastname' },
        text: '/start',
        occurredAt: new Date(1441645532000),
      },
    ]);
    expect(normalise('photo.json')[0]).toMatchObject({
      externalMessageId: '1111111:1366',
      text: 'The broken hinge',
      // The largest of the photo's sizes.
      attachments: [{ kind: 'image', contentType: 'image/jpeg', source: { from: 'telegram_file', fileId: 'AgADBAADbK0xG2ZqDgABr2' } }],
    });
    expect(normalise('document.json')[0]).toMatchObject({
      text: '',
      attachments: [
        {
          kind: 'file',
          contentType: 'application/pdf',
          filename: 'invoice.pdf',
          source: { from: 'telegram_file', fileId: 'BQADBAADvwADrjZgB' },
        },
      ],
    });
    expect(normalise('voice.json')[0]).toMatchObject({
      text: '',
      attachments: [
        { kind: 'audio', contentType: 'audio/ogg', source: { from: 'telegram_file', fileId: 'AwADBAADbXXXXXXXXXXXGBdhD2l6_XX' } },
      ],
    });
    // A GIF arrives as `animation` and, for old clients, as `document` too: it is a video.
    const gif = {
      update_id: 10010,
      message: {
        message_id: 1370,
        from: { id: 1111111, is_bot: false, first_name: 'Test' },
        chat: { id: 1111111, first_name: 'Test', type: 'private' },
        date: 1441645532,
        animation: { file_id: 'CgADBAADgif', file_name: 'dance.mp4', mime_type: 'video/mp4', duration: 2, width: 320, height: 240 },
        document: { file_id: 'CgADBAADgif', file_name: 'dance.mp4', mime_type: 'video/mp4' },
        caption: 'dance',
      },
    };
    expect(adapters.telegram.normalise(gif, { verification: 'signed', account: '7000001' })[0]).toMatchObject({
      text: 'dance',
      attachments: [
        { kind: 'video', contentType: 'video/mp4', filename: 'dance.mp4', source: { from: 'telegram_file', fileId: 'CgADBAADgif' } },
      ],
    });
    expect(normalise('edited.json')[0]).toMatchObject({
      externalMessageId: '1111111:1365:edited:1441645600',
      text: '(edited) Edited text',
      occurredAt: new Date(1441645600000),
    });
    expect(adapters.telegram.eventName(JSON.parse(body))).toBe('message');
  });

  it('says why when no bot was named, and ignores updates that are not messages', () => {
    expect(() => adapters.telegram.normalise(JSON.parse(body), { verification: 'skipped' })).toThrow('names no bot');
    expect(adapters.telegram.normalise({ update_id: 1, callback_query: { id: 'x' } }, { verification: 'signed', account: '1' })).toEqual(
      [],
    );
  });
});
