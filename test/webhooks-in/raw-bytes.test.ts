import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { VerifyContext } from '../../src/channels/channel.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { deliveriesJobStatement } from '../../src/webhooks-in/inbox.enqueue.js';
import { type NewInboxRow, storeDeliveries } from '../../src/webhooks-in/inbox.queries.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { fixture, sign } from '../helpers/webhooks.js';

const SECRET = 'raw-bytes-secret-0123456789';
const MAILGUN_KEY = 'raw-bytes-mailgun-key-0123456789';
const ctx = await useTestContext({
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET },
      whatsapp_session: { webhookSecret: SECRET },
      sms: { webhookSecret: SECRET },
      aggregator: { webhookSecret: SECRET },
      'social_one.native': { appSecret: SECRET },
      'email.mailgun': { webhookSecret: MAILGUN_KEY },
    }),
  },
});

/** A gateway message whose text holds bytes that are not UTF-8 (a provider's Latin-1 slip). */
const INVALID_UTF8 = Buffer.concat([
  Buffer.from('{"event":"message","session":"s1","payload":{"id":"m1","from":"49151@c.us","body":"caf'),
  Buffer.from([0xe9, 0xff, 0xc3]),
  Buffer.from('"}}'),
]);

const post = (key: string, payload: Buffer | string, headers: Record<string, string>) =>
  ctx.app.inject({ method: 'POST', url: `/webhooks/${key}`, headers: { 'content-type': 'application/json', ...headers }, payload });

describe('signatures over the exact bytes', () => {
  it('accepts a body that is not valid UTF-8 when it is signed over its bytes, and stores its UTF-8 text', async () => {
    expect(INVALID_UTF8.toString('utf8')).toContain('\uFFFD'); // the premise: decoding loses bytes
    const res = await post('whatsapp_session', INVALID_UTF8, { 'x-webhook-signature': sign(SECRET, INVALID_UTF8) });
    expect(res.statusCode, res.body).toBe(200);
    const row = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .selectAll()
      .where('raw_body', '=', INVALID_UTF8.toString('utf8'))
      .executeTakeFirst();
    expect(row?.integration_key).toBe('whatsapp_session');
  });

  it('refuses a digest computed over the U+FFFD-decoded text instead of the bytes', async () => {
    const res = await post('whatsapp_session', INVALID_UTF8, { 'x-webhook-signature': sign(SECRET, INVALID_UTF8.toString('utf8')) });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_api_key');
  });

  it('accepts an uppercase hex digest of the right HMAC (over HTTP, and for every HMAC adapter)', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    const upper = `sha256=${sign(SECRET, body).toUpperCase()}`;
    expect((await post('whatsapp', body, { 'x-hub-signature-256': upper })).statusCode).toBe(200);
    expect((await post('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign('other', body).toUpperCase()}` })).statusCode).toBe(401);

    const knowsNothing: VerifyContext = { isKnownOutboundMessage: async () => false };
    const cfg = { webhookSecret: SECRET, appSecret: SECRET };
    const cases: [keyof typeof adapters, string, string][] = [
      ['social_one.native', 'x-hub-signature-256', 'sha256='],
      ['social_two.native', 'x-hub-signature-256', 'sha256='],
      ['aggregator', 'x-aggregator-signature', ''],
      ['whatsapp', 'x-hub-signature-256', 'sha256='],
      ['whatsapp_session', 'x-gatewayone-signature', ''],
      ['sms', 'x-signature', 'sha256='],
    ];
    for (const [key, name, prefix] of cases) {
      const raw = rawBodyOf(INVALID_UTF8);
      // whatsapp parses before it checks: give it JSON with the invalid bytes inside a string
      const ok = await adapters[key].verify(raw, { [name]: `${prefix}${sign(SECRET, INVALID_UTF8).toUpperCase()}` }, cfg, knowsNothing);
      expect(ok.ok, key).toBe(true);
    }
  });
});

/** A JPEG's first bytes and bytes of no encoding, NUL among them: what a form's text cannot hold. */
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x80, 0xfe, 0xc3, 0x28, 0xff, 0xd9]);

/** A Mailgun inbound mail as multipart, its fields signed as Mailgun signs them (hex HMAC of timestamp + token). */
async function mailgunDelivery(files: { bytes: Buffer; type: string; name: string }[], key = MAILGUN_KEY) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex');
  const params = new URLSearchParams(fixture('email.mailgun', 'inbound.form'));
  for (const [k, v] of Object.entries({ timestamp, token, signature, 'Message-Id': `<${randomUUID()}@example.com>` })) params.set(k, v);
  const form = new FormData();
  for (const [k, v] of params) form.append(k, v);
  for (const [i, f] of files.entries()) form.append(`attachment-${i + 1}`, new Blob([f.bytes], { type: f.type }), f.name);
  const res = new Response(form);
  return { body: Buffer.from(await res.arrayBuffer()), contentType: res.headers.get('content-type')!, form: params.toString() };
}

const rowWithText = (text: string) =>
  ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('raw_body', '=', text).executeTakeFirstOrThrow();

describe('exact bytes beside the text, only where the text lost some', () => {
  it('a signed Mailgun delivery with binary parts keeps its bytes exactly; the operator still sees its text', async () => {
    const { body, contentType } = await mailgunDelivery([
      { bytes: Buffer.from('a,b\n1,2\n'), type: 'text/csv', name: 'a.csv' },
      { bytes: JPEG, type: 'image/jpeg', name: 'photo.jpg' },
    ]);
    const res = await post('email.mailgun', body, { 'content-type': contentType });
    expect(res.statusCode, res.body).toBe(200);
    const row = await rowWithText(body.toString('utf8').replaceAll('\u0000', '\uFFFD'));
    expect(row.verification).toBe('signed');
    expect(Buffer.isBuffer(row.raw_bytes) && row.raw_bytes.equals(body)).toBe(true);

    const view = await ctx.app.inject({ method: 'GET', url: `/v1/operator/webhook-inbox/${row.id}`, headers: adminHeaders() });
    expect(view.statusCode, view.body).toBe(200);
    const data = view.json().data;
    expect(data.rawBody).toBe(row.raw_body);
    expect(data).not.toHaveProperty('rawBytes');
    expect(data).not.toHaveProperty('raw_bytes');
    expect(data.payloadJson.files).toEqual([
      { field: 'attachment-1', filename: 'a.csv', contentType: 'text/csv' },
      { field: 'attachment-2', filename: 'photo.jpg', contentType: 'image/jpeg' },
    ]);
  });

  it('a binary Mailgun delivery signed with another key is refused and nothing is stored', async () => {
    const { body, contentType } = await mailgunDelivery([{ bytes: JPEG, type: 'image/jpeg', name: 'photo.jpg' }], 'another-key');
    const res = await post('email.mailgun', body, { 'content-type': contentType });
    expect(res.statusCode).toBe(401);
    const stored = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select('id')
      .where('raw_body', '=', body.toString('utf8').replaceAll('\u0000', '\uFFFD'))
      .execute();
    expect(stored).toEqual([]);
  });

  it('a Mailgun delivery whose text is exact (form-encoded, or text parts only) keeps no second copy', async () => {
    const { form } = await mailgunDelivery([]);
    expect((await post('email.mailgun', form, { 'content-type': 'application/x-www-form-urlencoded' })).statusCode).toBe(200);
    expect((await rowWithText(form)).raw_bytes).toBeNull();

    const multipart = await mailgunDelivery([{ bytes: Buffer.from('plain text, caf\u00e9\n'), type: 'text/plain', name: 'note.txt' }]);
    expect((await post('email.mailgun', multipart.body, { 'content-type': multipart.contentType })).statusCode).toBe(200);
    expect((await rowWithText(multipart.body.toString('utf8'))).raw_bytes).toBeNull();
  });

  it('a JSON provider never keeps bytes, even for a body that is not UTF-8', async () => {
    const body = Buffer.from(INVALID_UTF8.toString('latin1').replace('"m1"', '"m2"'), 'latin1');
    expect((await post('whatsapp_session', body, { 'x-webhook-signature': sign(SECRET, body) })).statusCode).toBe(200);
    const json = fixture('whatsapp', 'text-message.json').replace('"wamid.', '"wamid.rawbytes');
    expect((await post('whatsapp', json, { 'x-hub-signature-256': `sha256=${sign(SECRET, json)}` })).statusCode).toBe(200);
    expect((await rowWithText(body.toString('utf8'))).raw_bytes).toBeNull();
    expect((await rowWithText(json)).raw_bytes).toBeNull();
  });

  it('one INSERT stores a batch that mixes rows with and without bytes, and a batch with none', async () => {
    const exact = Buffer.from([0x2d, 0x2d, 0x00, 0xff, 0xfe, 0x80]);
    const text = exact.toString('utf8').replaceAll('\u0000', '\uFFFD'); // as it is stored
    const rows = [
      { id: randomUUID(), integrationKey: 'whatsapp', event: null, rawBody: '{"batch":1}', verification: 'signed' as const },
      {
        id: randomUUID(),
        integrationKey: 'email.mailgun',
        event: 'inbound',
        rawBody: text,
        rawBytes: exact,
        verification: 'signed' as const,
      },
      {
        id: randomUUID(),
        integrationKey: 'whatsapp',
        event: null,
        rawBody: '{"batch":3}',
        verification: 'signed' as const,
        rawBytes: null,
      },
    ];
    const store = async (batch: NewInboxRow[]) => storeDeliveries(ctx.deps.pool, batch, await deliveriesJobStatement(ctx.deps.boss, batch));
    await store(rows);
    await store([{ id: randomUUID(), integrationKey: 'whatsapp', event: null, rawBody: '{"batch":4}', verification: 'signed' }]);
    const stored = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select(['raw_body', 'raw_bytes'])
      .where('raw_body', 'in', ['{"batch":1}', text, '{"batch":3}', '{"batch":4}'])
      .execute();
    const byText = new Map(stored.map((r) => [r.raw_body, r.raw_bytes]));
    expect(byText.size).toBe(4);
    expect(byText.get('{"batch":1}')).toBeNull();
    expect(byText.get(text)?.equals(exact)).toBe(true);
    expect(byText.get('{"batch":3}')).toBeNull();
    expect(byText.get('{"batch":4}')).toBeNull();
  });
});
