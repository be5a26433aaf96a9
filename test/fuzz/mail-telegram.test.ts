import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NormaliseError, type VerifyContext } from '../../src/channels/channel.js';
import { parseFormBody } from '../../src/channels/form-data.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { fixture } from '../helpers/webhooks.js';
import { runs } from './fuzz-scale.js';

/**
 * Hostile input aimed at what the stock mail and Telegram keys read beyond JSON: multipart and
 * form bodies (Mailgun), basic-auth headers (Postmark) and secret-token headers (Telegram).
 * Whatever arrives, verification answers a boolean, parsing answers a form or undefined, and
 * normalising reads or throws NormaliseError.
 */
const SEED = 20261124;
const KEY = 'mailgun-fuzz-signing-key-0123';
const ctx: VerifyContext = {
  isKnownOutboundMessage: async () => false,
  claimOnce: async () => true,
  accountBySecret: async (_key, secret) => (secret === 'the-one-secret' ? '42' : undefined),
};

/** A multipart body from parts whose names, headers and contents are made up. */
const multipart = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,40}$/),
    fc.array(
      fc.tuple(
        fc.string({ maxLength: 20 }),
        fc.option(fc.string({ maxLength: 20 })),
        fc.option(fc.string({ maxLength: 30 })),
        fc.uint8Array({ maxLength: 200 }),
      ),
      { maxLength: 5 },
    ),
    fc.boolean(),
  )
  .map(([boundary, parts, closed]) => {
    const chunks: Buffer[] = [];
    for (const [name, filename, type, bytes] of parts) {
      const disposition = `Content-Disposition: form-data; name="${name}"${filename === null ? '' : `; filename="${filename}"`}`;
      chunks.push(
        Buffer.from(`--${boundary}\r\n${disposition}\r\n${type === null ? '' : `Content-Type: ${type}\r\n`}\r\n`),
        Buffer.from(bytes),
        Buffer.from('\r\n'),
      );
    }
    if (closed) chunks.push(Buffer.from(`--${boundary}--\r\n`));
    return Buffer.concat(chunks);
  });

describe('email.mailgun under hostile bodies', () => {
  it('parses made-up multipart and form bodies to a form or undefined, and normalises or refuses them', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          multipart,
          fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
        ),
        (bytes) => {
          const form = parseFormBody(bytes.toString('utf8'));
          if (form === undefined) return;
          expect(typeof form.fields).toBe('object');
          try {
            adapters['email.mailgun'].normalise(form, { verification: 'signed' });
          } catch (err) {
            expect(err).toBeInstanceOf(NormaliseError);
          }
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
  });

  it('verifies only a correct signature over timestamp + token, whatever the rest of the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), fc.boolean(), async (token, noise, correct) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = correct
          ? createHmac('sha256', KEY)
              .update(timestamp + token)
              .digest('hex')
          : noise;
        const params = new URLSearchParams(fixture('email.mailgun', 'inbound.form'));
        params.set('timestamp', timestamp);
        params.set('token', token);
        params.set('signature', signature);
        params.set('body-plain', noise);
        const result = await adapters['email.mailgun'].verify(rawBodyOf(params.toString()), {}, { webhookSecret: KEY }, ctx);
        expect(result.ok).toBe(correct && token !== '' && signature !== '');
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});

describe('email.postmark under hostile Authorization headers', () => {
  it('accepts exactly postmark:<secret>', async () => {
    const body = rawBodyOf(fixture('email.postmark', 'inbound.json'));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc
            .tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
            .map(([u, p]) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`),
        ),
        async (authorization) => {
          const result = await adapters['email.postmark'].verify(body, { authorization }, { webhookSecret: 'pm-secret' }, ctx);
          expect(result.ok).toBe(authorization === `Basic ${Buffer.from('postmark:pm-secret').toString('base64')}`);
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
  });
});

describe('telegram under hostile secret headers', () => {
  it('accepts only a secret a connection has', async () => {
    const body = rawBodyOf(fixture('telegram', 'message.json'));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 300 }), fc.constant('the-one-secret')), async (secret) => {
        const result = await adapters.telegram.verify(body, { 'x-telegram-bot-api-secret-token': secret }, {}, ctx);
        expect(result).toEqual(secret === 'the-one-secret' ? { ok: true, via: 'signed', account: '42' } : { ok: false });
      }),
      { seed: SEED, numRuns: runs(300) },
    );
  });
});
