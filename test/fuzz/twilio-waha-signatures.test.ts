import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { useTestContext } from '../helpers/app.js';
import { runs } from './fuzz-scale.js';

/**
 * The two signature schemes of providers as they send, property-based: Twilio's URL + sorted
 * form parameters (oracle: Twilio's own SDK) and WAHA's HMAC-SHA512 of the raw body. A body
 * the provider signed is accepted, the same body changed anywhere is refused, and whatever
 * arrives over HTTP unsigned is a 4xx with nothing stored.
 */
const SEED = 20261124;
const AUTH_TOKEN = 'fuzz-twilio-auth-token-0123456789';
const HMAC_KEY = 'fuzz-waha-hmac-key-0123456789';
const HOOK_URL = 'https://inbox.example.com/webhooks/sms.twilio';
const ctxOf = () => ({
  isKnownOutboundMessage: async () => false,
  request: { publicUrl: HOOK_URL, requestUrl: HOOK_URL, warn: () => {} },
});

/** Form parameters with the names Twilio uses and any text, repeats and escapes included. */
const formPairs = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom('Body', 'From', 'To', 'MessageSid', 'MessageStatus', 'NumMedia', 'MediaUrl0', '__proto__'),
      fc.string({ maxLength: 8 }),
    ),
    fc.string({ maxLength: 30 }),
  ),
  { maxLength: 12 },
);

function twilioParams(pairs: [string, string][]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of pairs) {
    const seen = out[k];
    out[k] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v];
  }
  return out;
}

describe('sms.twilio signatures', () => {
  it("accepts every form Twilio's SDK signed, and refuses it once any parameter changes", async () => {
    await fc.assert(
      fc.asyncProperty(formPairs, fc.string({ minLength: 1, maxLength: 10 }), async (pairs, extra) => {
        const form = new URLSearchParams(pairs).toString();
        // Parameters as the service will read them back from the form (the same text).
        const params = twilioParams([...new URLSearchParams(form)]);
        const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, HOOK_URL, params);
        const verify = (body: string) =>
          adapters['sms.twilio'].verify(rawBodyOf(body), { 'x-twilio-signature': signature }, { authToken: AUTH_TOKEN }, ctxOf());
        expect((await verify(form)).ok).toBe(true);
        const changed = `${form}${form ? '&' : ''}${new URLSearchParams([['Extra', extra]]).toString()}`;
        expect((await verify(changed)).ok).toBe(false);
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });

  it('never throws on any bytes or signature', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 40 }), async (bytes, signature) => {
        const v = await adapters['sms.twilio'].verify(
          rawBodyOf(Buffer.from(bytes)),
          { 'x-twilio-signature': signature },
          { authToken: AUTH_TOKEN },
          ctxOf(),
        );
        expect(v.ok).toBe(false);
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});

describe('whatsapp_session.waha signatures', () => {
  it('accepts any body WAHA signed, and refuses it with one byte changed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 300 }), fc.nat(), async (bytes, at) => {
        const body = Buffer.from(bytes);
        const headers = {
          'x-webhook-hmac': createHmac('sha512', HMAC_KEY).update(body).digest('hex'),
          'x-webhook-hmac-algorithm': 'sha512',
        };
        const verify = (b: Buffer) => adapters['whatsapp_session.waha'].verify(rawBodyOf(b), headers, { webhookSecret: HMAC_KEY }, ctxOf());
        expect((await verify(body)).ok).toBe(true);
        const changed = Buffer.from(body);
        const i = at % changed.length;
        changed[i] = (changed[i]! + 1) % 256;
        expect((await verify(changed)).ok).toBe(false);
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});

const ctx = await useTestContext({
  env: {
    INBOX_PUBLIC_URL: 'https://inbox.example.com',
    INBOX_INTEGRATIONS: JSON.stringify({ 'sms.twilio': { authToken: AUTH_TOKEN }, 'whatsapp_session.waha': { webhookSecret: HMAC_KEY } }),
  },
});

describe('the two keys over HTTP', () => {
  it('answer made-up form, multipart and JSON bodies with made-up signatures 401, and store none', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('sms.twilio', 'whatsapp_session.waha'),
        fc.oneof(
          formPairs.map((p) => new URLSearchParams(p).toString()),
          fc.string({ maxLength: 200 }),
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        fc.constantFrom('application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json', 'text/xml'),
        fc.string({ maxLength: 100 }),
        async (key, payload, contentType, signature) => {
          const res = await ctx.app.inject({
            method: 'POST',
            url: `/webhooks/${key}`,
            headers: {
              'content-type': contentType,
              'x-twilio-signature': signature,
              'x-webhook-hmac': signature,
              'x-webhook-hmac-algorithm': 'sha512',
            },
            payload,
          });
          expect(res.statusCode, res.body).toBe(401);
        },
      ),
      { seed: SEED, numRuns: runs(200) },
    );
    const stored = await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute();
    expect(stored).toHaveLength(0);
  });
});
