import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NormaliseError, parseBody } from '../../src/channels/channel.js';
import { adapters } from '../../src/channels/index.js';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { fixture } from '../helpers/webhooks.js';
import { runs } from './fuzz-scale.js';

/**
 * Hostile input, property-based (fast-check, seeded so a failure reproduces): whatever a
 * sender makes up, adapters refuse or read it without crashing, and the HTTP surface answers
 * a 4xx, never a 5xx, and stores nothing it refused.
 */
const SEED = 20261123;
const SECRET = 'fuzz-webhook-secret-0123456789';
const keys = Object.keys(adapters) as (keyof typeof adapters)[];

/** JSON shaped like provider payloads: the right keys with wrong, missing or nested values. */
const providerish = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constantFrom(
      'constructor',
      '__proto__',
      'toString',
      'sent',
      'delivered',
      'read',
      'failed',
      'received',
      'message',
      'message.ack',
      'inbound',
      'bounce',
      '-1',
      '1',
      '3',
    ),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom(
        'entry',
        'changes',
        'value',
        'messages',
        'statuses',
        'metadata',
        'phone_number_id',
        'id',
        'from',
        'status',
        'messaging',
        'message',
        'mid',
        'sender',
        'delivery',
        'mids',
        'events',
        'event',
        'accountId',
        'data',
        'session',
        'payload',
        'ack',
        'MessageSid',
        'MessageStatus',
        'SmsStatus',
        'NumMedia',
        'hasMedia',
        'media',
        'To',
        'From',
        'type',
        'messageId',
        'to',
        'account',
        'text',
        'body',
        'errors',
        '__proto__',
        'constructor',
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Keys whose receipts find their message by the provider's id, signed or not (Twilio's MessageSid). */
const BY_MESSAGE_ID = new Set<string>(['sms.twilio']);

/** `normalise` reads a payload into well-formed events, or refuses it with NormaliseError; nothing else. */
function readsOrRefuses(key: keyof typeof adapters, payload: unknown, verification: string): void {
  try {
    const events = adapters[key].normalise(payload, { verification: verification as 'signed' });
    for (const e of events) {
      // A provider delivery is messages and receipts; only live chat opens conversations.
      if (e.type === 'conversation') throw new Error('a provider adapter produced a conversation event');
      expect(typeof e.externalMessageId).toBe('string');
      // A receipt says how it finds its message: through an account, or the message it names
      // (only an unsigned report that named it, or a key whose receipts always go by message id).
      if (e.type === 'status' && e.resolveBy === 'sent_message') expect(verification === 'correlated' || BY_MESSAGE_ID.has(key)).toBe(true);
      else expect(typeof e.externalAccountId).toBe('string');
      if (e.type === 'status') expect(['sent', 'delivered', 'read', 'failed']).toContain(e.status);
      if (e.type === 'message') expect(typeof e.text).toBe('string');
    }
  } catch (err) {
    if (!(err instanceof NormaliseError)) throw err;
  }
}

/** Each adapter's real payloads: hostile values are planted into them, so they reach deep. */
const FIXTURES: [keyof typeof adapters, string][] = [
  ['whatsapp', 'text-message.json'],
  ['whatsapp', 'statuses.json'],
  ['whatsapp', 'status-failed.json'],
  ['whatsapp', 'image-message.json'],
  ['social_one.native', 'message.json'],
  ['social_one.native', 'delivery-and-echo.json'],
  ['social_two.native', 'message.json'],
  ['aggregator', 'message.json'],
  ['aggregator', 'batch.json'],
  ['whatsapp_session', 'message.json'],
  ['whatsapp_session', 'ack.json'],
  ['sms', 'delivered.json'],
  ['sms', 'inbound.form'],
  ['sms', 'undelivered.form'],
  ['email', 'inbound.json'],
  ['email', 'bounce.json'],
  ['sms.twilio', 'inbound.form'],
  ['sms.twilio', 'inbound-mms.form'],
  ['sms.twilio', 'status-undelivered.form'],
  ['whatsapp_session.waha', 'message.json'],
  ['whatsapp_session.waha', 'message-image.json'],
  ['whatsapp_session.waha', 'ack.json'],
  ['email.postmark', 'inbound.json'],
  ['email.postmark', 'reply.json'],
  ['email.mailgun', 'inbound.form'],
  ['telegram', 'message.json'],
  ['telegram', 'photo.json'],
  ['telegram', 'edited.json'],
];

/** Every path to a value in `v` (objects and arrays walked), root first. */
function pathsOf(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  const here = [at];
  if (Array.isArray(v)) return here.concat(...v.map((x, i) => pathsOf(x, [...at, i])));
  if (typeof v === 'object' && v !== null) return here.concat(...Object.entries(v).map(([k, x]) => pathsOf(x, [...at, k])));
  return here;
}

/** `v` with the value at `path` replaced (or, for `undefined`, the key removed). */
function plant(v: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  // biome-ignore lint/suspicious/noExplicitAny: a copy of any JSON value, indexed by the path's keys
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  if (value === undefined && rest.length === 0) delete copy[head!];
  else copy[head!] = plant(copy[head!], rest, value);
  return copy;
}

/** `key`'s real payloads with one to three hostile values planted in each. */
function mutatedOf(key: keyof typeof adapters) {
  return fc.constantFrom(...FIXTURES.filter(([k]) => k === key)).chain(([, name]) => {
    const base = parseBody(adapters[key], fixture(key, name));
    const paths = pathsOf(base);
    return fc
      .array(fc.tuple(fc.constantFrom(...paths), fc.oneof(providerish, fc.constant(undefined))), { minLength: 1, maxLength: 3 })
      .map((plants) => plants.reduce<unknown>((p, [path, value]) => plant(p, path, value), base));
  });
}

/**
 * A value as it arrives: through JSON. fast-check can build objects JSON never yields (one
 * without a prototype for a `__proto__` key), which no delivery can carry.
 */
const wire = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

/** JSON nested `depth` deep, objects and arrays alternating. */
const nested = (depth: number) => `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;

describe.each(keys)('the %s adapter under hostile input', (key) => {
  it.runIf(FIXTURES.some(([k]) => k === key))(
    'normalise reads its real payloads with hostile values planted in them, or throws NormaliseError',
    () => {
      fc.assert(
        fc.property(mutatedOf(key), fc.constantFrom('signed', 'correlated', 'report_secret', 'skipped'), (payload, verification) => {
          readsOrRefuses(key, wire(payload), verification);
        }),
        { seed: SEED, numRuns: runs(400) },
      );
    },
  );

  it('normalise reads any provider-shaped JSON, or throws NormaliseError', () => {
    fc.assert(
      fc.property(providerish, fc.constantFrom('signed', 'report_secret', 'correlated', 'skipped'), (payload, verification) => {
        readsOrRefuses(key, wire(payload), verification);
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });

  it('normalise survives JSON nested thousands deep', () => {
    for (const depth of [100, 1000, 5000]) readsOrRefuses(key, JSON.parse(nested(depth)), 'signed');
  });

  it('verify, parse and eventName never throw, whatever the bytes and headers', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          providerish.map((v) => new TextEncoder().encode(JSON.stringify(v) ?? 'null')),
          fc.string({ maxLength: 200 }).map((t) => new TextEncoder().encode(t)),
        ),
        fc.dictionary(
          fc.constantFrom(
            'x-hub-signature-256',
            'x-signature',
            'x-aggregator-signature',
            'x-vendor-auth',
            'x-service-signature',
            'x-webhook-signature',
            'x-gatewayone-signature',
            'x-twilio-signature',
            'x-webhook-hmac',
            'x-webhook-hmac-algorithm',
            'content-type',
            'host',
          ),
          fc.oneof(
            fc.string({ maxLength: 80 }),
            fc.constantFrom(
              'sha256=',
              'sha256=00',
              'sha1=',
              '',
              ' ',
              'application/x-www-form-urlencoded',
              'application/json; charset=latin1',
            ),
          ),
        ),
        async (bytes, headers) => {
          const body = rawBodyOf(Buffer.from(bytes));
          const result = await adapters[key].verify(
            body,
            headers,
            { webhookSecret: SECRET, appSecret: SECRET, providerReportSecret: SECRET },
            { isKnownOutboundMessage: async () => false },
          );
          expect(typeof result.ok).toBe('boolean');
          adapters[key].eventName(parseBody(adapters[key], body.text));
        },
      ),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});

const ctx = await useTestContext({
  env: {
    INBOX_INTEGRATIONS: JSON.stringify(
      Object.fromEntries(keys.map((k) => [k, { webhookSecret: SECRET, appSecret: SECRET, webhookVerifyToken: SECRET }])),
    ),
  },
});
const tenant = await makeTenant(ctx.deps);

describe('the HTTP surface under hostile input', () => {
  it('answers unsigned deliveries of any content with 4xx and stores none of them', async () => {
    const before = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...keys, 'unknown', 'email'),
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
          providerish.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
        ),
        fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream'),
        fc.option(fc.string({ maxLength: 70 }), { nil: undefined }),
        async (key, payload, contentType, signature) => {
          const headers: Record<string, string> = { 'content-type': contentType };
          if (signature !== undefined) headers['x-hub-signature-256'] = signature;
          const res = await ctx.app.inject({ method: 'POST', url: `/webhooks/${encodeURIComponent(key)}`, headers, payload });
          expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
          expect(res.statusCode, res.body).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: runs(400) },
    );
    const after = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('never answers 5xx to made-up cursors, limits, ids and bodies on /v1', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          '/v1/threads',
          '/v1/contacts',
          '/v1/connections',
          '/v1/api-keys',
          '/v1/threads/1/messages',
          '/v1/admin/webhook-inbox',
          '/v1/personal-access-tokens',
        ),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 40 }),
        async (path, cursor, limit) => {
          const url = `${path}?cursor=${encodeURIComponent(cursor)}&limit=${encodeURIComponent(limit)}`;
          const res = await ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
          expect(res.statusCode, `${url} ${res.body}`).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/v1/api-keys', '/v1/threads/1/messages', '/v1/connections/1', '/api/user/login', '/v1/personal-access-tokens'),
        fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ maxLength: 200 })),
        fc.constantFrom('POST', 'PATCH'),
        async (path, body, method) => {
          const res = await ctx.app.inject({
            method: method as 'POST',
            url: path,
            headers: { ...tenant.headers, 'content-type': 'application/json' },
            payload: body,
          });
          expect(res.statusCode, `${method} ${path} ${body} → ${res.body}`).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
  });
});

describe('smtpUrl values of every hostile shape', () => {
  const target = { accountId: 'support@acme.test', to: 'dana@example.org', text: 'hi', messageId: 1 };
  const PRIVATE = [
    '127.0.0.1',
    '10.0.0.8',
    '192.168.1.1',
    '172.16.0.9',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '[::1]',
    '[fd00::1]',
    '[fe80::1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:7f00:1]',
    '2130706433',
    '0x7f.0.0.1',
    '127.1',
    'localhost',
  ];
  const smtpUrls = fc
    .record({
      scheme: fc.constantFrom('smtp', 'smtps', 'SMTP', 'smtp+tls', 'http'),
      auth: fc.constantFrom('', 'u:p@', 'u%00:p%ff@', '@', 'u:p@evil.test@'),
      host: fc.oneof(fc.constantFrom(...PRIVATE), fc.constantFrom('internal.corp.test', 'relay.internal.test')),
      port: fc.constantFrom('', ':25', ':6379', ':22', ':0', ':65535', ':99999'),
      tail: fc.constantFrom(
        '',
        '/',
        '/x?debug=true',
        '?logger=true&proxy=http://127.0.0.1:8080',
        '?tls.rejectUnauthorized=false',
        '#frag',
        '?host=10.0.0.1&port=25',
      ),
    })
    .map((p) => `${p.scheme}://${p.auth}${p.host}${p.port}${p.tail}`);

  it('never reach a private address, never echo what answered, never throw', async () => {
    // Every name here "resolves" to a private address: nothing may be connected to.
    const resolve = async () => [{ address: '10.9.8.7', family: 4 }];
    await fc.assert(
      fc.asyncProperty(smtpUrls, async (smtpUrl) => {
        const outcome = await adapters.email.send!(target, { smtpUrl }, { timeoutMs: 1_000, smtp: { allowPrivate: false, resolve } });
        expect(outcome.outcome, smtpUrl).toBe('failed');
        if (outcome.outcome === 'sent') return;
        expect(outcome.error, smtpUrl).toMatch(
          /^email: (refused: .* address; SMTP servers must be on public addresses|smtpUrl must be an smtp:\/\/ or smtps:\/\/ URL)$/,
        );
        expect(outcome.error).not.toContain('10.9.8.7');
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});
