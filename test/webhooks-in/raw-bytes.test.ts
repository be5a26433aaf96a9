import { describe, expect, it } from 'vitest';
import type { VerifyContext } from '../../src/channels/channel.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { useTestContext } from '../helpers/app.js';
import { fixture, sign } from '../helpers/webhooks.js';

const SECRET = 'raw-bytes-secret-0123456789';
const ctx = await useTestContext({
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET },
      whatsapp_session: { webhookSecret: SECRET },
      sms: { webhookSecret: SECRET },
      aggregator: { webhookSecret: SECRET },
      'social_one.native': { appSecret: SECRET },
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
