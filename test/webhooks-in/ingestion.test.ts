import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { deliveryPayload } from '../../src/webhooks-in/delivery-payload.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { useTestContext } from '../helpers/app.js';
import { fixture, sign } from '../helpers/webhooks.js';

const SECRET = 'whatsapp-webhook-secret-1';
const SESSION_SECRET = 'gateway-session-secret-0123';
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  logLines,
  env: {
    INBOX_BODY_LIMIT_BYTES: '65536',
    INBOX_LOG_WEBHOOKS: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET },
      whatsapp_session: { webhookSecret: SESSION_SECRET },
      sms: { webhookSecret: SECRET },
      email: { webhookSecret: 'mail-shared-secret' },
      aggregator: { webhookSecret: SECRET, skipVerify: true },
      'social_one.native': { appSecret: SECRET, webhookVerifyToken: 'verify-token' },
    }),
  },
});

const post = (key: string, body: string, headers: Record<string, string>) =>
  ctx.app.inject({ method: 'POST', url: `/webhooks/${key}`, headers: { 'content-type': 'application/json', ...headers }, payload: body });

async function rowsAndJobs() {
  const rows = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().orderBy('created_at').execute();
  const { rows: jobs } = await sql<{
    id: string;
    data: { ids: string[] };
  }>`SELECT id, data FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(ctx.deps.db);
  return { rows, jobs };
}

describe('POST /webhooks/:integrationKey', () => {
  it('verifies, stores the row with every field, enqueues its id and answers {"status":"queued"}', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    const before = await rowsAndJobs();
    const res = await post('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"status":"queued"}');
    // The answer's exact headers, in order, whichever way the body is produced.
    expect(Object.entries(res.headers).filter(([k]) => k !== 'date' && k !== 'x-request-id')).toEqual([
      ['content-type', 'application/json; charset=utf-8'],
      ['content-length', '19'],
      ['connection', 'keep-alive'],
    ]);
    expect(Object.keys(res.headers)[0]).toBe('x-request-id');
    const after = await rowsAndJobs();
    expect(after.rows).toHaveLength(before.rows.length + 1);
    const row = after.rows.at(-1)!;
    expect(row).toMatchObject({
      integration_key: 'whatsapp',
      app_id: null,
      event: 'messages',
      raw_body: body,
      // the payload is the raw body parsed: stored once, as raw_body, and derived on read
      payload_json: null,
      verification: 'signed',
      status: 'received',
      attempt_count: 0,
      next_retry_at: null,
      last_error: null,
      processed_at: null,
    });
    expect(deliveryPayload(row)).toEqual(JSON.parse(body));
    expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(after.jobs.flatMap((j) => j.data.ids)).toContain(row.id);
  });

  it('keeps the raw body byte for byte (whitespace, key order, unicode) for every content type', async () => {
    const json = '{ "object":"whatsapp_business_account" ,\n "entry": [], "note": "caf\u00e9 \u2713" }';
    expect((await post('whatsapp', json, { 'x-hub-signature-256': `sha256=${sign(SECRET, json)}` })).statusCode).toBe(200);
    const form = fixture('sms', 'inbound.form');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/sms',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-signature': sign(SECRET, form) },
      payload: form,
    });
    expect(res.statusCode).toBe(200);
    const text = 'plain text body';
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/webhooks/whatsapp_session',
          headers: { 'content-type': 'text/plain', 'x-signature': sign(SESSION_SECRET, text) },
          payload: text,
        })
      ).statusCode,
    ).toBe(200);
    const { rows } = await rowsAndJobs();
    expect(rows.map((r) => r.raw_body)).toEqual(expect.arrayContaining([json, form, text]));
    const smsRow = rows.find((r) => r.raw_body === form)!;
    // sms verification parsed the form; that payload is the form read again from raw_body
    expect(smsRow.payload_json).toBeNull();
    expect(deliveryPayload(smsRow)).toMatchObject({ MessageSid: 'SM7c6a5d3e1f0b4a2c9d8e7f6a5b4c3d21', Body: 'Is my order shipped?' });
    // a validly signed body that is not JSON is kept as raw text with no payload
    const textRow = rows.find((r) => r.raw_body === text)!;
    expect(textRow.payload_json).toBeNull();
    expect(deliveryPayload(textRow)).toBeUndefined();
  });

  it('gives payloadJson from the raw body when verification returned no payload', async () => {
    const body = fixture('whatsapp_session', 'message.json');
    expect((await post('whatsapp_session', body, { 'x-webhook-signature': sign(SESSION_SECRET, body) })).statusCode).toBe(200);
    const row = (await rowsAndJobs()).rows.find((r) => r.raw_body === body)!;
    expect(deliveryPayload(row)).toEqual(JSON.parse(body));
    expect(row.event).toBe('message');
  });

  it('rejects a failed verification with 401 invalid_api_key and writes nothing', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    const before = await rowsAndJobs();
    const attempts: Record<string, string>[] = [
      {},
      { 'x-hub-signature-256': sign(SECRET, body) },
      { 'x-hub-signature-256': `sha256=${sign('wrong', body)}` },
      { 'x-hub-signature-256': 'sha256=' },
      { 'x-hub-signature-256': 'sha256=zz' },
    ];
    for (const headers of attempts) {
      const res = await post('whatsapp', body, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toEqual({
        error: { code: 'invalid_api_key', message: expect.any(String) },
        meta: { requestId: expect.any(String) },
      });
    }
    const after = await rowsAndJobs();
    expect(after.rows).toHaveLength(before.rows.length);
    expect(after.jobs).toHaveLength(before.jobs.length);
  });

  it('tells a signed whatsapp body that is not JSON that it is not JSON, 401 invalid_api_key, nothing stored', async () => {
    const before = await rowsAndJobs();
    const notJson = 'hello, not json';
    const res = await post('whatsapp', notJson, { 'x-hub-signature-256': `sha256=${sign(SECRET, notJson)}` });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toEqual({ code: 'invalid_api_key', message: 'webhook body is not JSON' });
    // A JSON body with a wrong signature still hears about the signature.
    const body = fixture('whatsapp', 'text-message.json');
    const wrong = await post('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign('wrong', body)}` });
    expect(wrong.json().error.message).toBe('webhook signature or shared secret is missing or wrong');
    const after = await rowsAndJobs();
    expect(after.rows).toHaveLength(before.rows.length);
    expect(after.jobs).toHaveLength(before.jobs.length);
  });

  it('answers 401 on /webhooks/livechat and /webhooks/ai whatever is sent', async () => {
    for (const key of ['livechat', 'ai']) {
      const res = await post(key, '{}', { 'x-signature': sign(SECRET, '{}') });
      expect(res.statusCode).toBe(401);
      expect(res.json().error.code).toBe('invalid_api_key');
    }
  });

  it('answers an unknown integration key with 404 and an oversized body with 413', async () => {
    const unknown = await post('fax', '{}', {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');
    const big = JSON.stringify({ filler: 'x'.repeat(70_000) });
    const tooLarge = await post('whatsapp', big, { 'x-hub-signature-256': `sha256=${sign(SECRET, big)}` });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().error.code).toBe('payload_too_large');
  });

  it('answers any body and any headers with 200, 401, 404 or 413, never a 500', async () => {
    const bodies = ['', 'null', '[]', '{"entry":"x"}', '\u0000', '\ud800', '%%%', 'a=1&a=2', '{"a":"\\u0000"}'];
    const keys = ['whatsapp', 'social_one.native', 'whatsapp_session', 'sms', 'email', 'aggregator', 'livechat'];
    for (const key of keys) {
      for (const body of bodies) {
        for (const headers of [
          {},
          {
            'x-signature': sign(SECRET, body),
            'x-hub-signature-256': `sha256=${sign(SECRET, body)}`,
            'x-vendor-auth': 'mail-shared-secret',
          },
        ]) {
          const res = await ctx.app.inject({
            method: 'POST',
            url: `/webhooks/${key}`,
            headers: { 'content-type': 'application/octet-stream', ...headers },
            payload: body,
          });
          expect([200, 401, 404, 413], `${key} ${JSON.stringify(body)} → ${res.statusCode} ${res.body}`).toContain(res.statusCode);
        }
      }
    }
  });

  it('judges a body whose content type cannot be read (empty, `json`, a list) by its signature alone, never 415', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    for (const type of ['', ' ', 'json', 'undefined', 'application/json, text/plain']) {
      const before = await rowsAndJobs();
      const res = await post('whatsapp', body, { 'content-type': type, 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` });
      expect(res.statusCode, JSON.stringify(type)).toBe(200);
      const after = await rowsAndJobs();
      expect(after.rows.at(-1)).toMatchObject({ integration_key: 'whatsapp', raw_body: body, status: 'received' });
      expect(after.rows).toHaveLength(before.rows.length + 1);
      const wrong = await post('whatsapp', body, { 'content-type': type, 'x-hub-signature-256': `sha256=${sign('wrong', body)}` });
      expect(wrong.statusCode, JSON.stringify(type)).toBe(401);
      expect(wrong.json().error.code).toBe('invalid_api_key');
    }
  });

  it('POST /webhooks/email is the email integration', async () => {
    const body = fixture('email', 'inbound.json');
    expect((await post('email', body, { 'x-vendor-auth': 'mail-shared-secret' })).statusCode).toBe(200);
    expect((await post('email', body, { 'x-vendor-auth': 'nope' })).statusCode).toBe(401);
    const row = (await rowsAndJobs()).rows.find((r) => r.raw_body === body)!;
    expect(row.integration_key).toBe('email');
  });

  it('accepts without verification when the integration sets skipVerify', async () => {
    const body = fixture('aggregator', 'message.json');
    expect((await post('aggregator', body, {})).statusCode).toBe(200);
  });

  it('logs every inbound delivery with key, signing header and raw body when INBOX_LOG_WEBHOOKS is set', async () => {
    const body = fixture('whatsapp_session', 'ack.json');
    const signature = sign(SESSION_SECRET, body);
    await post('whatsapp_session', body, { 'x-gatewayone-signature': signature });
    expect(logLines).toContainEqual(
      expect.objectContaining({ msg: 'inbound webhook', integrationKey: 'whatsapp_session', signature, rawBody: body }),
    );
  });

  it('logs only the first 4 characters of the e-mail secret, which is its own signing header', async () => {
    const body = fixture('email', 'bounce.json');
    const from = logLines.length;
    expect((await post('email', body, { 'x-service-signature': 'mail-shared-secret' })).statusCode).toBe(200);
    expect((await post('email', body, { 'x-vendor-auth': 'mail-shared-secret' })).statusCode).toBe(200);
    const lines = logLines.slice(from);
    expect(lines.map((l) => JSON.stringify(l)).join('\n')).not.toContain('shared-secret');
    // Both of its headers, x-vendor-auth as much as x-service-signature.
    expect(lines.filter((l) => l.msg === 'inbound webhook')).toEqual([
      expect.objectContaining({ integrationKey: 'email', signature: 'mail…', rawBody: body }),
      expect.objectContaining({ integrationKey: 'email', signature: 'mail…', rawBody: body }),
    ]);
  });
});

describe('GET /webhooks/:integrationKey (challenge)', () => {
  it('echoes hub.challenge verbatim as text/plain, not enveloped', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/webhooks/social_one.native?hub.mode=subscribe&hub.verify_token=verify-token&hub.challenge=1158201444',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('1158201444');
    const wa = await ctx.app.inject({
      method: 'GET',
      url: `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${SECRET}&hub.challenge=abc%20def`,
    });
    expect(wa.body).toBe('abc def');
  });

  it('answers 404 when the adapter returns null', async () => {
    for (const url of [
      '/webhooks/social_one.native?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1',
      '/webhooks/social_one.native?hub.mode=subscribe&hub.verify_token=verify-token',
      '/webhooks/aggregator?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1',
      '/webhooks/fax',
    ]) {
      expect((await ctx.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
