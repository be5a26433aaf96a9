import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { normaliseOrigin } from '../../src/connections/allowed-origins.js';
import { MAX_GRACE_SECONDS } from '../../src/webhooks-out/endpoints.service.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { FUZZ_TIMEOUT_MS, runs } from './fuzz-scale.js';

/**
 * The hardening surfaces under hostile input (seeded fast-check, like hostile-input.test.ts):
 * the visitor socket's upgrade with made-up widget keys, Origin headers and tokens, and the
 * webhook endpoint routes with made-up grace periods, page limits, ids and bodies.
 */
const SEED = 20261125;
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const base = new URL(await ctx.app.listen({ port: 0, host: '127.0.0.1' }));

const SHOP_ORIGIN = 'https://shop.example';
const open = await makeWidget(ctx.deps, tenant.workspace.id);
const shop = await makeWidget(ctx.deps, tenant.workspace.id, { allowedOrigins: [SHOP_ORIGIN] });
const tokens = { [open.key]: (await startVisitor(ctx.app, open.key)).token, [shop.key]: (await startVisitor(ctx.app, shop.key)).token };

/** Every byte percent-encoded: any string is a path segment or a query value, lone surrogates included. */
const encode = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** Text at and past every limit, and shapes that look like numbers, ids or injections. */
const hostileText = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('', ' ', '0', '-0', '-1', '1e309', 'NaN', 'Infinity', '1.5', '0x10', '9007199254740993', 'null', '[]', '%00', '😀'),
  fc.constantFrom(String(MAX_GRACE_SECONDS), String(MAX_GRACE_SECONDS + 1), '86400', '99999999999999999999'),
  fc.integer({ min: -(2 ** 31), max: 2 ** 53 }).map(String),
);

/** The status an upgrade of `path` is answered with (101 when it is accepted), or a failure when it hangs. */
function upgrade(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: base.hostname,
      port: base.port,
      path,
      // A connection each: the server closes one whose upgrade it refused.
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
        ...headers,
      },
      timeout: FUZZ_TIMEOUT_MS,
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => {
      req.destroy();
      reject(new Error(`hung: ${path} ${JSON.stringify(headers)}`));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the visitor socket under hostile widget keys, Origin headers and tokens', () => {
  // Header values a client can send: visible ASCII, tabs and Latin-1 (Node refuses the rest).
  const headerValue = fc.string({ maxLength: 80, unit: 'binary' }).map((s) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, ''));
  const origin = fc.option(
    fc.oneof(
      headerValue,
      fc.webUrl(),
      fc.constantFrom(
        SHOP_ORIGIN,
        'null',
        '',
        '*',
        'HTTPS://SHOP.EXAMPLE',
        'https://shop.example:443',
        'https://shop.example/',
        'https://shop.example.',
        'https://shop.example.evil.test',
        'https://evil.test/https://shop.example',
        'http://shop.example',
        'https://shop.example, https://evil.test',
        'file://',
        'https://xn--shp-sna.example',
        base.origin,
      ),
    ),
    { nil: undefined },
  );
  const widgetKey = fc.oneof(fc.constantFrom(open.key, shop.key), hostileText, fc.constantFrom(`${open.key}x`, open.key.toUpperCase()));
  const token = fc.option(fc.oneof(fc.constant('valid'), hostileText), { nil: undefined });

  it('answers 101, 401, 403 or 404, and upgrades for a widget with allowedOrigins only from one of them', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(widgetKey, origin, token, async (key, from, visitorToken) => {
        const value = visitorToken === 'valid' ? (tokens[key] ?? 'valid') : visitorToken;
        const path = `/v1/livechat/${encode(key)}/socket${value === undefined ? '' : `?visitorToken=${encode(value)}`}`;
        const status = await upgrade(path, from === undefined ? {} : { origin: from });
        const what = `${path} origin=${JSON.stringify(from)} → ${status}`;
        seen.add(status);
        expect([101, 401, 403, 404], what).toContain(status);
        if (key !== open.key && key !== shop.key) expect(status, what).toBe(404);
        // Allowed: its origin in any spelling that normalises to it, or this service's own page.
        if (status === 101 && key === shop.key) expect([SHOP_ORIGIN, base.origin], what).toContain(normaliseOrigin(from ?? ''));
        if (status === 101) expect(value, what).toBe(tokens[key]);
      }),
      { seed: SEED, numRuns: runs(300) },
    );
    // The cases reached every answer, so none of the rules above held vacuously.
    expect([...seen].sort()).toEqual([101, 401, 403, 404]);
  });
});

const created = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: tenant.headers,
  payload: { url: 'https://hooks.example.org/inbox' },
});
const endpointId = String(created.json().data.id);

describe('the webhook endpoint routes under hostile grace periods, limits, ids and bodies', () => {
  const id = fc.oneof(fc.constant(endpointId), hostileText);

  /** Answers within FUZZ_TIMEOUT_MS, never 5xx; resolves with the answer. */
  async function answered(options: InjectOptions) {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`hung: ${JSON.stringify(options).slice(0, 300)}`)), FUZZ_TIMEOUT_MS);
    });
    try {
      const res = await Promise.race([ctx.app.inject(options), hung]);
      expect(res.statusCode, `${JSON.stringify(options).slice(0, 300)} → ${res.body}`).toBeLessThan(500);
      return res;
    } finally {
      clearTimeout(timer);
    }
  }

  it('rotate-secret takes a graceSeconds only as an integer within 0..7 days, and never answers 5xx', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(id, fc.array(hostileText, { minLength: 1, maxLength: 2 }), async (target, graces) => {
        const query = graces.map((g) => `graceSeconds=${encode(g)}`).join('&');
        const res = await answered({
          method: 'POST',
          url: `/v1/webhook-endpoints/${encode(target)}/rotate-secret?${query}`,
          headers: tenant.headers,
        });
        seen.add(res.statusCode);
        if (res.statusCode === 200) {
          const grace = Number(graces[0]);
          expect(graces).toHaveLength(1);
          expect(Number.isInteger(grace) && grace >= 0 && grace <= MAX_GRACE_SECONDS, `${query} → 200`).toBe(true);
        }
      }),
      { seed: SEED, numRuns: runs(200) },
    );
    expect(seen).toContain(200);
    expect(seen).toContain(422);
  });

  it('never answers 5xx to made-up limits, cursors, statuses and ids on the delivery log, test and redeliver', async () => {
    await fc.assert(
      fc.asyncProperty(id, hostileText, hostileText, hostileText, async (target, limit, cursor, status) => {
        await answered({
          method: 'GET',
          url: `/v1/webhook-endpoints/${encode(target)}/deliveries?limit=${encode(limit)}&cursor=${encode(cursor)}&status=${encode(status)}`,
          headers: tenant.headers,
        });
        // 429 once the workspace's test/redeliver budget is spent is an answer like any other.
        await answered({ method: 'POST', url: `/v1/webhook-endpoints/deliveries/${encode(cursor)}/redeliver`, headers: tenant.headers });
        if (target !== endpointId)
          await answered({ method: 'POST', url: `/v1/webhook-endpoints/${encode(target)}/test`, headers: tenant.headers });
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });

  it('never answers 5xx to made-up bodies on create and update, even past the endpoint cap', async () => {
    const body = fc.oneof(
      fc.json({ maxDepth: 4 }),
      fc.record(
        {
          url: fc.oneof(hostileText, fc.webUrl(), fc.constantFrom('http://127.0.0.1:6379/', 'https://169.254.169.254/latest', 'ftp://x')),
          events: fc.oneof(fc.array(hostileText, { maxLength: 3 }), fc.constantFrom(['message.created'], ['*'], [], 'message.created')),
          enabled: fc.oneof(fc.boolean(), hostileText),
          signatureScheme: fc.oneof(fc.constantFrom('service', 'standard'), hostileText),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('POST', 'PATCH'), id, body, async (method, target, payload) => {
        await answered({
          method: method as 'POST',
          url: method === 'POST' ? '/v1/webhook-endpoints' : `/v1/webhook-endpoints/${encode(target)}`,
          headers: { ...tenant.headers, 'content-type': 'application/json' },
          payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
        });
      }),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});
