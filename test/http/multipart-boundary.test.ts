import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody, PNG_1X1 } from '../helpers/multipart.js';

const MAILGUN_KEY = 'mailgun-signing-key-0123456789';
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ 'email.mailgun': { webhookSecret: MAILGUN_KEY } }) } });
const tenant = await makeTenant(ctx.deps);
const widget = await makeWidget(ctx.deps, tenant.workspace.id);
const visitor = await startVisitor(ctx.app, widget.key);

/** Content types that say multipart but name no usable boundary. */
const NO_BOUNDARY = [
  'multipart/form-data',
  'Multipart/Form-Data',
  'multipart/form-data;',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=""',
  'multipart/form-data; charset=utf-8',
  'multipart/form-data; xboundary=abc',
  'multipart/mixed',
];

const count = async (table: 'attachments' | 'webhook_inbox') =>
  Number(
    (
      await ctx.deps.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A real Mailgun form, signed as Mailgun signs it (HMAC-SHA256 of timestamp + token). */
function signedMailgunForm() {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(16).toString('hex');
  const signature = createHmac('sha256', MAILGUN_KEY)
    .update(timestamp + token)
    .digest('hex');
  return multipartBody(
    { field: 'attachment-1', filename: 'a.png', contentType: 'image/png', bytes: PNG_1X1 },
    { timestamp, token, signature, recipient: 'support@acme.test', sender: 'dana@example.org', 'Message-Id': `<${token}@example.org>` },
  );
}

describe('a multipart body without a boundary', () => {
  it('is 400 with the envelope on every multipart route, and nothing is kept', async () => {
    const routes: [string, Record<string, string>, Buffer][] = [
      ['/v1/attachments', tenant.headers, multipartBody({ filename: 'a.png', bytes: PNG_1X1 }).payload],
      [`/v1/livechat/${widget.key}/attachments`, visitor.headers, multipartBody({ filename: 'a.png', bytes: PNG_1X1 }).payload],
      // Signed, with a body that names its own boundary: the header alone is wrong.
      ['/webhooks/email.mailgun', {}, signedMailgunForm().payload],
      ['/webhooks/sms.twilio', {}, Buffer.from('--x\r\n\r\nhello\r\n--x--\r\n')],
    ];
    const before = [await count('attachments'), await count('webhook_inbox')];
    for (const [url, headers, payload] of routes) {
      for (const contentType of NO_BOUNDARY) {
        const res = await ctx.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload });
        expect(res.statusCode, `${url} ${contentType}: ${res.body}`).toBe(400);
        expect(res.json()).toEqual({
          error: { code: 'bad_request', message: expect.stringMatching(/boundary/) },
          meta: { requestId: expect.any(String) },
        });
      }
    }
    expect([await count('attachments'), await count('webhook_inbox')]).toEqual(before);
  });

  it('and a body with a boundary but no delimiter line, are 400 on the upload routes', async () => {
    for (const [url, headers] of [
      ['/v1/attachments', tenant.headers],
      [`/v1/livechat/${widget.key}/attachments`, visitor.headers],
    ] as const) {
      for (const [boundary, payload] of [
        ['xyz', 'garbage'],
        ['(x)', Buffer.from([0])],
      ] as const) {
        const res = await ctx.app.inject({
          method: 'POST',
          url,
          headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
          payload,
        });
        expect(res.statusCode, `${url} ${boundary}: ${res.body}`).toBe(400);
        expect(res.json().error.code).toBe('bad_request');
      }
    }
  });

  it('leaves well-formed multipart bodies alone, a quoted boundary included', async () => {
    const body = multipartBody({ filename: 'a.png', bytes: PNG_1X1 });
    const quoted = body.headers['content-type'].replace(/boundary=(.*)$/, 'boundary="$1"');
    for (const contentType of [body.headers['content-type'], quoted, `${quoted}; charset=utf-8`]) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/attachments',
        headers: { ...tenant.headers, 'content-type': contentType },
        payload: body.payload,
      });
      expect(res.statusCode, `${contentType}: ${res.body}`).toBe(201);
    }
    const mail = signedMailgunForm();
    const delivered = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/email.mailgun',
      headers: mail.headers,
      payload: mail.payload,
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
  });
});
