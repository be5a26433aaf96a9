import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/channels/index.js';
import { processDeliveries } from '../../src/webhooks-in/process-deliveries.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { FUZZ_TIMEOUT_MS, runs } from './fuzz-scale.js';

/**
 * Hostile input at every route of the HTTP surface (seeded fast-check, like
 * hostile-input.test.ts): every /v1 route the OpenAPI document lists gets made-up path
 * parameters, queries, cursors, headers and bodies of any content type and nesting; every
 * integration gets deliveries it accepts unverified (skipVerify) whose contents are hostile,
 * and the worker processes them. Never a 5xx, never a hung request, never a row left behind.
 */
const SEED = 20261124;
const keys = Object.keys(adapters).filter((k) => k !== 'livechat' && k !== 'ai');
const ctx = await useTestContext({
  env: { INBOX_INTEGRATIONS: JSON.stringify(Object.fromEntries(keys.map((k) => [k, { skipVerify: true }]))) },
});
const tenant = await makeTenant(ctx.deps);
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

/** Answers within FUZZ_TIMEOUT_MS or fails as a hung request. */
async function answer(request: InjectOptions) {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: ${JSON.stringify(request).slice(0, 300)}`)), FUZZ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([ctx.app.inject(request), hung]);
  } finally {
    clearTimeout(timer);
  }
}

const deep = (depth: number, open = '{"a":[', close = ']}') => `${open.repeat(depth)}1${close.repeat(depth)}`;

/** Any text, numbers at and past every limit, and shapes that look like ids. */
const hostileText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1e309',
    'NaN',
    '9007199254740993',
    '99999999999999999999',
    '1.5',
    '0x10',
    'null',
    'true',
    '[]',
    '{}',
    '%00',
    '\u0000',
    '../..',
    'ø',
    '😀',
    "'; DROP TABLE threads; --",
  ),
  fc.integer({ min: 1000, max: Number.MAX_SAFE_INTEGER }).map(String),
  fc.uuid(),
);

/** Cursors: base64url of `<ms>:<id>`-like text with hostile parts, and plain garbage. */
const hostileCursor = fc.oneof(
  hostileText,
  fc.tuple(hostileText, hostileText).map(([a, b]) => Buffer.from(`${a}:${b}`).toString('base64url')),
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 16n }), fc.bigInt({ min: 0n, max: 10n ** 16n }))
    .map(([a, b]) => Buffer.from(`${a}:${b}`).toString('base64url')),
);

const hostileBody = fc.oneof(
  fc.json({ maxDepth: 6 }),
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    deep(2000),
    deep(2000, '[', ']'),
    `{"text":${'"x"'.repeat(2)}}`,
    '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{}}}',
  ),
  fc
    .dictionary(
      fc.constantFrom(
        'text',
        'name',
        'email',
        'password',
        'scopes',
        'roles',
        'credentials',
        'integrationKey',
        'externalAccountId',
        'remember',
        'expiresInDays',
      ),
      fc.oneof(hostileText, fc.jsonValue({ maxDepth: 3 })),
    )
    .map((o) => JSON.stringify(o)),
);

/** What a header can carry over HTTP: Node's parser refuses control characters (NUL, CR, LF) with a 400 before any route runs. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is removed
const headerSafe = (t: string) => t.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');

const hostileHeaders = fc.dictionary(
  fc.constantFrom(
    'content-type',
    'idempotency-key',
    'x-request-id',
    'accept',
    'accept-encoding',
    'x-forwarded-for',
    'if-none-match',
    'authorization',
  ),
  fc.oneof(
    hostileText.map(headerSafe),
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-16',
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'Bearer',
      'Bearer x.y.z',
      'Basic Og==',
    ),
  ),
);

interface Route {
  method: string;
  path: string;
}

const spec = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
const routes: Route[] = Object.entries(spec.paths).flatMap(([path, ops]) =>
  Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
);

describe('every route under hostile input', () => {
  it('the OpenAPI document lists the /v1 routes this suite walks', () => {
    expect(routes.filter((r) => r.path.startsWith('/v1/')).length).toBeGreaterThan(20);
  });

  it('never answers 5xx nor hangs, whatever the path parameters, query, cursor, headers and body', async () => {
    // Logins run argon2 against a dummy hash on every try: a handful is enough.
    const walked = routes.filter((r) => r.path !== '/api/user/login' && r.path !== '/v1/realtime');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...walked),
        fc.array(hostileText, { minLength: 3, maxLength: 3 }),
        fc.dictionary(fc.constantFrom('limit', 'cursor', 'offset', 'page', 'status', 'q', 'sort', 'per_page'), hostileText),
        hostileCursor,
        hostileHeaders,
        fc.option(hostileBody, { nil: undefined }),
        fc.constantFrom('tenant', 'admin', 'none'),
        async (route, params, query, cursor, headers, body, as) => {
          let i = 0;
          const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(params[i++ % params.length]!));
          const search = new URLSearchParams({ ...query, cursor }).toString();
          const auth = as === 'tenant' ? tenant.headers : as === 'admin' ? adminHeaders() : {};
          const res = await answer({
            method: route.method as InjectOptions['method'],
            url: `${path}?${search}`,
            headers: { 'content-type': 'application/json', ...headers, ...auth },
            ...(body !== undefined && route.method !== 'GET' && route.method !== 'DELETE' ? { payload: body } : {}),
          });
          expect(res.statusCode, `${route.method} ${path}?${search} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: runs(600) },
    );
  });
});

describe('deliveries accepted unverified with hostile contents', () => {
  it('are stored or refused with a 4xx, and every stored one is processed to an end state, never left behind', async () => {
    const delivered: string[] = [];
    const stored = async () =>
      (await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('status', '=', 'received').execute()).map((r) => r.id);
    // The route walk above posts to /webhooks/{integrationKey} too.
    const before = new Set(await stored());
    const formish = fc
      .dictionary(
        fc.constantFrom('MessageSid', 'MessageStatus', 'To', 'From', 'Body', 'AccountSid', 'ErrorCode', 'SmsStatus', 'NumMedia'),
        hostileText,
      )
      .map((o) => new URLSearchParams(o).toString());
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...keys),
        fc.oneof(
          hostileBody,
          formish,
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'text/plain',
          'application/json; charset=utf-8',
          'application/octet-stream',
        ),
        async (key, payload, contentType) => {
          const res = await answer({
            method: 'POST',
            url: `/webhooks/${encodeURIComponent(key)}`,
            headers: { 'content-type': contentType },
            payload,
          });
          expect(res.statusCode, res.body).not.toBeGreaterThanOrEqual(500);
          if (res.statusCode === 200) delivered.push(key);
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
    const ids = await stored();
    expect(ids.filter((id) => !before.has(id)).length).toBe(delivered.length);
    for (let i = 0; i < ids.length; i += 50) await processDeliveries(ctx.deps, ids.slice(i, i + 50));
    const left = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    expect(left.filter((r) => r.status === 'received')).toEqual([]);
  });
});
