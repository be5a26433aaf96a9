import { describe, expect, it } from 'vitest';
import { NormaliseError, parseBody, type Verification, type VerificationKind, type VerifyContext } from '../../src/channels/channel.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { fixture, sign } from '../helpers/webhooks.js';

const SECRET = 'whsec_0123456789abcdef';
const knowsNothing: VerifyContext = { isKnownOutboundMessage: async () => false };
const verify = (
  key: keyof typeof adapters,
  body: string,
  headers: Record<string, string>,
  cfg: object = { webhookSecret: SECRET, appSecret: SECRET },
  ctx = knowsNothing,
) => adapters[key].verify(rawBodyOf(body), headers, cfg, ctx);
/** The payload of an accepted verification. */
const payloadOf = (v: Verification) => (v.ok ? v.payload : undefined);
/** Normalises as the worker does for a delivery accepted `via` (signed unless said). */
const normalise = (key: keyof typeof adapters, payload: unknown, via: VerificationKind = 'signed') =>
  adapters[key].normalise(payload, { verification: via });

describe('social_one.native / social_two.native (one adapter, configured twice)', () => {
  const body = fixture('social_one.native', 'message.json');
  for (const key of ['social_one.native', 'social_two.native'] as const) {
    it(`${key}: requires the sha256= prefix even when the digest is right`, async () => {
      expect(await verify(key, body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` })).toEqual({ ok: true, via: 'signed' });
      expect((await verify(key, body, { 'x-hub-signature-256': sign(SECRET, body) })).ok).toBe(false);
    });
    it(`${key}: fails without appSecret, without the header, or with another secret`, async () => {
      const header = { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` };
      expect((await verify(key, body, header, { webhookSecret: SECRET })).ok).toBe(false);
      expect((await verify(key, body, {})).ok).toBe(false);
      expect((await verify(key, body, { 'x-hub-signature-256': `sha256=${sign('other', body)}` })).ok).toBe(false);
      expect((await verify(key, body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}00` })).ok).toBe(false);
    });
  }
  it('answers the hub challenge only with mode subscribe and the configured webhookVerifyToken', () => {
    const cfg = { webhookVerifyToken: 'verify-me' };
    const a = adapters['social_one.native'];
    expect(a.challenge({ 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me', 'hub.challenge': '1158201444' }, {}, cfg)).toBe(
      '1158201444',
    );
    expect(a.challenge({ 'hub.mode': 'unsubscribe', 'hub.verify_token': 'verify-me', 'hub.challenge': 'x' }, {}, cfg)).toBeNull();
    expect(a.challenge({ 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': 'x' }, {}, cfg)).toBeNull();
    expect(a.challenge({ 'hub.mode': 'subscribe', 'hub.verify_token': 'verify-me' }, {}, cfg)).toBeNull();
    expect(a.challenge({ 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': 'x' }, {}, {})).toBeNull();
  });
  it('normalises Messenger and Instagram messages; skips echoes; maps delivery mids', () => {
    expect(normalise('social_one.native', JSON.parse(body))).toEqual([
      {
        type: 'message',
        externalAccountId: '1126357274156702',
        externalMessageId: expect.stringMatching(/^m_AG5/),
        contact: { externalId: '6774138815947562' },
        text: 'Hi, is the store open on Sunday?',
        occurredAt: new Date(1749416383000),
      },
    ]);
    expect(normalise('social_two.native', JSON.parse(fixture('social_two.native', 'message.json')))[0]).toMatchObject({
      externalAccountId: '17841405793187218',
      contact: { externalId: '1914382715439872' },
      text: 'Love the new collection!',
    });
    expect(normalise('social_one.native', JSON.parse(fixture('social_one.native', 'delivery-and-echo.json')))).toEqual([
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: '1126357274156702',
        externalMessageId: 'm_outbound_1',
        status: 'delivered',
        occurredAt: undefined,
      },
    ]);
  });
});

describe('aggregator', () => {
  const body = fixture('aggregator', 'message.json');
  it('takes the first present of x-aggregator-signature, x-hub-signature-256, x-signature', async () => {
    const good = sign(SECRET, body);
    expect((await verify('aggregator', body, { 'x-aggregator-signature': good })).ok).toBe(true);
    expect((await verify('aggregator', body, { 'x-hub-signature-256': good })).ok).toBe(true);
    expect((await verify('aggregator', body, { 'x-signature': good })).ok).toBe(true);
    // first present wins: a wrong first header is not rescued by a right later one
    expect((await verify('aggregator', body, { 'x-aggregator-signature': 'bad', 'x-signature': good })).ok).toBe(false);
    expect((await verify('aggregator', body, { 'x-hub-signature-256': 'bad', 'x-signature': good })).ok).toBe(false);
  });
  it('strips the sha256= prefix when present and tolerates it absent', async () => {
    expect((await verify('aggregator', body, { 'x-signature': `sha256=${sign(SECRET, body)}` })).ok).toBe(true);
    expect((await verify('aggregator', body, { 'x-signature': sign(SECRET, body) })).ok).toBe(true);
    expect((await verify('aggregator', body, { 'x-signature': sign(SECRET, body) }, {})).ok).toBe(false);
  });
  it('has no handshake', () => {
    expect(
      adapters.aggregator.challenge(
        { 'hub.mode': 'subscribe', 'hub.verify_token': SECRET, 'hub.challenge': 'x' },
        {},
        { webhookSecret: SECRET, webhookVerifyToken: SECRET },
      ),
    ).toBeNull();
  });
  it('normalises single events and batches, ignoring events it has no use for', () => {
    expect(normalise('aggregator', JSON.parse(body))).toEqual([
      {
        type: 'message',
        externalAccountId: 'agg-acct-7781',
        externalMessageId: 'agg-msg-0001',
        contact: { externalId: '+4915112345678', name: 'Jonas' },
        text: 'Can I change my delivery address?',
        occurredAt: new Date('2026-11-20T09:15:00Z'),
      },
    ]);
    expect(normalise('aggregator', JSON.parse(fixture('aggregator', 'batch.json')))).toEqual([
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: 'agg-acct-7781',
        externalMessageId: 'agg-out-1',
        status: 'delivered',
        error: undefined,
        occurredAt: new Date(1763630100000),
      },
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: 'agg-acct-7781',
        externalMessageId: 'agg-out-2',
        status: 'failed',
        error: '30008: Unknown error',
        occurredAt: undefined,
      },
    ]);
  });
});

describe('whatsapp', () => {
  const body = fixture('whatsapp', 'text-message.json');
  const cfg = { webhookSecret: SECRET, providerReportSecret: 'report-secret' };
  it('rejects a body that is not JSON before looking at any secret', async () => {
    const notJson = 'hello';
    expect((await verify('whatsapp', notJson, { 'x-hub-signature-256': `sha256=${sign(SECRET, notJson)}` }, cfg)).ok).toBe(false);
    expect((await verify('whatsapp', notJson, { 'x-vendor-auth': 'report-secret' }, cfg)).ok).toBe(false);
  });
  it('accepts a delivery report by x-vendor-auth equal to providerReportSecret, returning the parsed payload', async () => {
    const result = await verify('whatsapp', body, { 'x-vendor-auth': 'report-secret' }, cfg);
    expect(result).toEqual({ ok: true, via: 'report_secret', payload: JSON.parse(body) });
    expect((await verify('whatsapp', body, { 'x-vendor-auth': 'report-secret' }, { webhookSecret: SECRET })).ok).toBe(false);
  });
  it('otherwise verifies x-hub-signature-256 with webhookSecret and a required prefix', async () => {
    expect(
      (await verify('whatsapp', body, { 'x-vendor-auth': 'wrong', 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` }, cfg)).ok,
    ).toBe(true);
    expect((await verify('whatsapp', body, { 'x-hub-signature-256': sign(SECRET, body) }, cfg)).ok).toBe(false);
    expect((await verify('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign('x', body)}` }, cfg)).ok).toBe(false);
  });
  it('compares hub.verify_token with webhookSecret (no separate verify token)', () => {
    const q = { 'hub.mode': 'subscribe', 'hub.verify_token': SECRET, 'hub.challenge': 'ch-42' };
    expect(adapters.whatsapp.challenge(q, {}, { webhookSecret: SECRET })).toBe('ch-42');
    expect(adapters.whatsapp.challenge(q, {}, { webhookVerifyToken: SECRET })).toBeNull();
  });
  it('normalises messages (text and captions), delivery receipts and failures with their error', () => {
    expect(normalise('whatsapp', JSON.parse(body))).toEqual([
      {
        type: 'message',
        externalAccountId: '106540352242922',
        externalMessageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        contact: { externalId: '16505551234', name: 'Sheena Nelson' },
        text: 'Does it come in another color?',
        occurredAt: new Date(1749416383000),
      },
    ]);
    expect(normalise('whatsapp', JSON.parse(fixture('whatsapp', 'image-message.json')))[0]).toMatchObject({ text: 'This one' });
    expect(normalise('whatsapp', JSON.parse(fixture('whatsapp', 'statuses.json'))).map((e) => e.type === 'status' && e.status)).toEqual([
      'delivered',
      'read',
    ]);
    expect(normalise('whatsapp', JSON.parse(fixture('whatsapp', 'status-failed.json')))[0]).toMatchObject({
      status: 'failed',
      error: '131047: Re-engagement message: Re-engagement message',
    });
    expect(adapters.whatsapp.eventName(JSON.parse(body))).toBe('messages');
  });
  it('says what is missing when a payload cannot be read', () => {
    expect(() => normalise('whatsapp', { entry: [{ changes: [{ field: 'messages', value: { metadata: {} } }] }] })).toThrow(
      'entry[0].changes[0].value.metadata.phone_number_id is missing',
    );
    expect(() => normalise('whatsapp', 'text')).toThrow('payload is not an object');
  });

  it('names each wrong part of a payload by its path, and reads a numeric sender as text', () => {
    const value = (v: Record<string, unknown>) => ({
      entry: [{ changes: [{ field: 'messages', value: { metadata: { phone_number_id: '1' }, ...v } }] }],
    });
    const wrong: [unknown, string][] = [
      [{ entry: 'x' }, 'entry is not an array'],
      [{ entry: [5] }, 'entry[0] is not an object'],
      [{ entry: [{ changes: {} }] }, 'entry[0].changes is not an array'],
      [{ entry: [{}, { changes: [1] }] }, 'entry[1].changes[0] is not an object'],
      [{ entry: [{ changes: [{ value: 3 }] }] }, 'entry[0].changes[0].value is not an object'],
      [{ entry: [{ changes: [{ value: {} }] }] }, 'entry[0].changes[0].value.metadata is not an object'],
      [value({ contacts: 'x' }), 'entry[0].changes[0].value.contacts is not an array'],
      [value({ messages: {} }), 'entry[0].changes[0].value.messages is not an array'],
      [value({ messages: [{ from: '2', id: 'a' }, null] }), 'entry[0].changes[0].value.messages[1] is not an object'],
      [value({ messages: [{ id: 'a' }] }), 'entry[0].changes[0].value.messages[0].from is missing'],
      [value({ messages: [{ from: '2', id: '' }] }), 'entry[0].changes[0].value.messages[0].id is missing'],
      [value({ statuses: 'x' }), 'entry[0].changes[0].value.statuses is not an array'],
      [value({ statuses: [{ status: 'sent' }] }), 'entry[0].changes[0].value.statuses[0].id is missing'],
      [value({ statuses: [{ id: 'a', status: 'sent' }, 'x'] }), 'entry[0].changes[0].value.statuses[1] is not an object'],
      [value({ statuses: [{ id: 'a', status: '' }] }), 'entry[0].changes[0].value.statuses[0].status is missing'],
      [value({ statuses: [{ id: 'a', status: 'lost' }] }), 'entry[0].changes[0].value.statuses[0].status "lost" is not a known status'],
    ];
    for (const [payload, message] of wrong) expect(() => normalise('whatsapp', payload), message).toThrow(message);
    expect(normalise('whatsapp', value({ messages: [{ from: 316, id: 42, text: { body: 'hi' } }] }))).toMatchObject([
      { externalAccountId: '1', externalMessageId: '42', contact: { externalId: '316' }, text: 'hi' },
    ]);
  });
});

describe('whatsapp_session', () => {
  const body = fixture('whatsapp_session', 'message.json');
  const session = 's'.repeat(16);
  it('chooses the scheme by which header arrived; every header uses the same webhookSecret; verifies without parsing', async () => {
    for (const h of ['x-gatewayone-signature', 'x-webhook-signature', 'x-signature']) {
      expect(await verify('whatsapp_session', body, { [h]: sign(session, body) }, { webhookSecret: session })).toEqual({
        ok: true,
        via: 'signed',
      });
      expect(await verify('whatsapp_session', body, { [h]: `sha256=${sign(session, body)}` }, { webhookSecret: session })).toEqual({
        ok: true,
        via: 'signed',
      });
    }
    expect(
      (
        await verify(
          'whatsapp_session',
          body,
          { 'x-gatewayone-signature': 'bad', 'x-signature': sign(session, body) },
          { webhookSecret: session },
        )
      ).ok,
    ).toBe(false);
    expect((await verify('whatsapp_session', body, {}, { webhookSecret: session })).ok).toBe(false);
  });
  it('normalises gateway messages and acks', () => {
    expect(normalise('whatsapp_session', JSON.parse(body))).toEqual([
      {
        type: 'message',
        externalAccountId: 'acme-main',
        externalMessageId: 'false_447700900123@c.us_3EB0C767D26A1D8A1B2C',
        contact: { externalId: '447700900123', name: 'Priya' },
        text: 'Hello, are you open today?',
        occurredAt: new Date(1763630100000),
      },
    ]);
    expect(normalise('whatsapp_session', JSON.parse(fixture('whatsapp_session', 'ack.json')))).toEqual([
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: 'acme-main',
        externalMessageId: 'true_447700900123@c.us_3EB0OUTBOUND',
        status: 'read',
        error: undefined,
      },
    ]);
  });

  it("skips messages sent from the phone itself and contacts' status updates (status@broadcast)", () => {
    const message = (payload: Record<string, unknown>) => {
      const p = JSON.parse(body);
      Object.assign(p.payload, payload);
      return normalise('whatsapp_session', p);
    };
    expect(message({ fromMe: true })).toEqual([]);
    expect(message({ from: 'status@broadcast', participant: '447700900123@c.us' })).toEqual([]);
    expect(message({ from: '447700900123@c.us' })).toHaveLength(1);
  });

  it("reads a message id written as whatsapp-web.js's object, as a reply's id is read", () => {
    const p = JSON.parse(body);
    p.payload.id = { fromMe: false, remote: '447700900123@c.us', id: '3EB0C767', _serialized: 'false_447700900123@c.us_3EB0C767' };
    expect(normalise('whatsapp_session', p)[0]).toMatchObject({ externalMessageId: 'false_447700900123@c.us_3EB0C767' });
    const ack = JSON.parse(fixture('whatsapp_session', 'ack.json'));
    ack.payload.id = { fromMe: true, _serialized: 'true_447700900123@c.us_3EB0OUTBOUND' };
    expect(normalise('whatsapp_session', ack)[0]).toMatchObject({
      externalMessageId: 'true_447700900123@c.us_3EB0OUTBOUND',
      status: 'read',
    });
  });
});

describe('sms', () => {
  it('verifies x-signature with the prefix optional and returns the parsed form or JSON payload', async () => {
    const form = fixture('sms', 'inbound.form');
    const ok = await verify('sms', form, { 'x-signature': sign(SECRET, form) });
    expect(ok.ok).toBe(true);
    expect(payloadOf(ok)).toMatchObject({
      MessageSid: 'SM7c6a5d3e1f0b4a2c9d8e7f6a5b4c3d21',
      Body: 'Is my order shipped?',
      To: '+14155550100',
    });
    expect((await verify('sms', form, { 'x-signature': `sha256=${sign(SECRET, form)}` })).ok).toBe(true);
    expect((await verify('sms', form, { 'x-signature': sign('other', form) })).ok).toBe(false);
  });
  it('accepts an unsigned report only when its MessageSid names a message already sent', async () => {
    const body = fixture('sms', 'delivered.json');
    const knows: VerifyContext = { isKnownOutboundMessage: async (key, id) => key === 'sms' && id === 'SMOUTBOUND00000000000000000000001' };
    const accepted = await verify('sms', body, {}, undefined, knows);
    expect(accepted).toMatchObject({ ok: true, via: 'correlated' });
    // Accepted as correlated, it can only update the message it names: no account is claimed.
    expect(normalise('sms', payloadOf(accepted), 'correlated')).toEqual([
      { type: 'status', resolveBy: 'sent_message', externalMessageId: 'SMOUTBOUND00000000000000000000001', status: 'delivered' },
    ]);
    // The same report signed claims its sender's account.
    expect(normalise('sms', payloadOf(accepted), 'signed')[0]).toMatchObject({ externalAccountId: '+14155550100' });
    expect((await verify('sms', body, {}, undefined, knowsNothing)).ok).toBe(false);
    // a present but wrong signature is not rescued by correlation
    expect((await verify('sms', body, { 'x-signature': 'bad' }, undefined, knows)).ok).toBe(false);
  });
  it('normalises inbound SMS, receipts and failures (form-encoded and JSON)', async () => {
    const form = fixture('sms', 'inbound.form');
    const inbound = await verify('sms', form, { 'x-signature': sign(SECRET, form) });
    expect(normalise('sms', payloadOf(inbound))).toEqual([
      {
        type: 'message',
        externalAccountId: '+14155550100',
        externalMessageId: 'SM7c6a5d3e1f0b4a2c9d8e7f6a5b4c3d21',
        contact: { externalId: '+14155550199' },
        text: 'Is my order shipped?',
      },
    ]);
    const undelivered = fixture('sms', 'undelivered.form');
    const report = await verify('sms', undelivered, { 'x-signature': sign(SECRET, undelivered) });
    expect(normalise('sms', payloadOf(report))).toEqual([
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: '+14155550100',
        externalMessageId: 'SMOUTBOUND00000000000000000000002',
        status: 'failed',
        error: '30003: Unreachable destination handset',
      },
    ]);
  });
});

describe('email', () => {
  const body = fixture('email', 'inbound.json');
  it('requires x-vendor-auth, else x-service-signature, to equal webhookSecret exactly', async () => {
    expect((await verify('email', body, { 'x-vendor-auth': SECRET })).ok).toBe(true);
    expect((await verify('email', body, { 'x-service-signature': SECRET })).ok).toBe(true);
    expect((await verify('email', body, { 'x-vendor-auth': `${SECRET} ` })).ok).toBe(false);
    expect((await verify('email', body, { 'x-vendor-auth': 'wrong', 'x-service-signature': SECRET })).ok).toBe(false);
    expect((await verify('email', body, { 'x-vendor-auth': SECRET }, {})).ok).toBe(false);
    expect((await verify('email', body, {})).ok).toBe(false);
  });
  it('normalises inbound mail and bounces', () => {
    expect(normalise('email', JSON.parse(body))).toEqual([
      {
        type: 'message',
        externalAccountId: 'support@acme.test',
        externalMessageId: '<CAF=3Dx+8u1Zk2Q@mail.example.org>',
        contact: { externalId: 'dana@example.org', name: 'Dana Whitfield' },
        // The subject is a header, not the text (docs/email.md).
        text: 'Hi, the invoice for October shows two line items for the same order.',
        occurredAt: new Date('2026-11-20T08:00:00Z'),
        email: {
          messageId: '<CAF=3Dx+8u1Zk2Q@mail.example.org>',
          inReplyTo: null,
          from: { email: 'dana@example.org', name: 'Dana Whitfield' },
          to: [{ email: 'support@acme.test' }],
          cc: [],
          subject: 'Invoice question',
          references: [],
        },
      },
    ]);
    expect(normalise('email', JSON.parse(fixture('email', 'bounce.json')))).toEqual([
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: 'support@acme.test',
        externalMessageId: '<outbound-1@acme.test>',
        status: 'failed',
        error: 'bounce: 550 5.1.1 The email account that you tried to reach does not exist',
        occurredAt: new Date(1763630100000),
      },
    ]);
  });
  it("refuses a sender address that is a list or carries a line break: it would be every reply's To", () => {
    const inbound = JSON.parse(body);
    for (const email of ['dana@example.org, eve@evil.test', 'dana@example.org\r\nBcc: eve@evil.test', '"Dana" <dana@example.org>']) {
      const payload = { events: [{ ...inbound.events[0], from: { email } }] };
      expect(() => normalise('email', payload), email).toThrow(NormaliseError);
      expect(() => normalise('email', payload), email).toThrow('from.email is not one e-mail address');
    }
    // One mailbox of an internationalised domain, in Unicode or in punycode, arrives.
    for (const email of ['ivan@пример.рф', 'ivan@xn--e1afmkfd.xn--p1ai']) {
      const [event] = normalise('email', { events: [{ ...inbound.events[0], from: { email } }] });
      expect(event?.type === 'message' && event.contact.externalId, email).toBe(email);
    }
  });
});

describe('livechat and ai', () => {
  it('always reject and normalise to nothing, by design', async () => {
    for (const key of ['livechat', 'ai'] as const) {
      expect(await verify(key, '{}', { 'x-signature': sign(SECRET, '{}') })).toEqual({ ok: false });
      expect(normalise(key, { anything: true })).toEqual([]);
    }
  });
});

describe('payloads are the raw body as the adapter parses it', () => {
  it('a payload verification parsed is exactly what parsing the raw body gives, so it is derived, never stored', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    const verification = await verify('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` });
    expect(verification.ok).toBe(true);
    expect(parseBody(adapters.whatsapp, body)).toEqual(payloadOf(verification));
    const form = fixture('sms', 'inbound.form');
    const sms = await verify('sms', form, { 'x-signature': sign(SECRET, form) });
    expect(parseBody(adapters.sms, form)).toEqual(payloadOf(sms));
    // an unsigned report's acceptance is in `via`, not in its payload
    const report = fixture('sms', 'delivered.json');
    const unsigned = await verify('sms', report, {}, { webhookSecret: SECRET }, { isKnownOutboundMessage: async () => true });
    expect(unsigned).toMatchObject({ ok: true, via: 'correlated' });
    expect(payloadOf(unsigned)).toEqual(parseBody(adapters.sms, report));
  });

  it('turns NUL, which Postgres text cannot hold, into U+FFFD in JSON and form bodies', () => {
    expect(parseBody(adapters.whatsapp, '{"text":"a\\u0000b","k\\u0000":["\\u0000"]}')).toEqual({
      text: 'a\uFFFDb',
      'k\uFFFD': ['\uFFFD'],
    });
    expect(parseBody(adapters.sms, 'Body=a%00b')).toEqual({ Body: 'a\uFFFDb' });
  });
});

describe('statuses named like Object.prototype members', () => {
  /** Each adapter's status delivery with its status (or ack) replaced. */
  const withStatus: Record<string, (status: string) => unknown> = {
    whatsapp: (s) => {
      const p = JSON.parse(fixture('whatsapp', 'statuses.json'));
      p.entry[0].changes[0].value.statuses = [{ id: 'wamid.X', status: s }];
      return p;
    },
    aggregator: (s) => ({ event: 'message.status', accountId: 'agg-acct-7781', data: { id: 'agg-out-1', status: s } }),
    sms: (s) => ({ ...JSON.parse(fixture('sms', 'delivered.json')), MessageStatus: s }),
    whatsapp_session: (s) => ({ ...JSON.parse(fixture('whatsapp_session', 'ack.json')), payload: { id: 'x', ack: s } }),
  };
  const outcome = (key: string, status: string): string => {
    try {
      const events = adapters[key as keyof typeof adapters].normalise(withStatus[key]!(status), { verification: 'signed' });
      return events.length === 0 ? 'ignored' : `events ${JSON.stringify(events)}`;
    } catch (err) {
      return err instanceof NormaliseError ? 'NormaliseError' : `crash ${String(err)}`;
    }
  };
  for (const key of Object.keys(withStatus)) {
    it(`${key}: constructor, __proto__, toString are unknown statuses, not found on Object.prototype`, () => {
      const unknown = outcome(key, 'no-such-status');
      expect(['NormaliseError', 'ignored']).toContain(unknown);
      for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        expect(outcome(key, name), `${key} ${name}`).toBe(unknown);
      }
    });
  }
});
