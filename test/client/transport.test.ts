import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { InboxClientError, retryAfterMs, tenantClient } from '../../packages/client/src/index.js';
import { waitFor } from '../helpers/webhooks.js';

/**
 * The client's transport against a real HTTP server on loopback that answers as each test
 * scripts it: timeouts, aborts, and retries that wait what `retry-after` asks.
 */
type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'hang';
let script: Answer[] = [];
const seen: { method: string; url: string; at: number; idempotencyKey?: string }[] = [];
const hanging = new Set<ServerResponse>();

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  req.resume();
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, at: Date.now(), idempotencyKey: req.headers['idempotency-key'] as string | undefined });
    const answer = script.shift() ?? { status: 200, body: { data: { ok: true }, meta: {} } };
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  script = [];
  seen.length = 0;
  for (const res of hanging) res.destroy();
  hanging.clear();
});

const refused = (status: number, retryAfter?: string): Answer => ({
  status,
  ...(retryAfter === undefined ? {} : { headers: { 'retry-after': retryAfter } }),
  body: { error: { code: status === 429 ? 'rate_limited' : 'unavailable', message: 'not now' }, meta: { requestId: 'r' } },
});

describe('retries', () => {
  it('waits what retry-after asks (seconds) before trying again, and then answers', async () => {
    script = [refused(503, '1')];
    const started = Date.now();
    const labels = await tenantClient({ baseUrl, apiKey: 'k' }).labels();
    expect(labels).toEqual({ ok: true });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('retries a refused POST (429: nothing was done) but never a POST that met a gateway error', async () => {
    script = [refused(429, '0')];
    await tenantClient({ baseUrl }).createCannedResponse({ shortCode: 'hi', content: 'Hello' });
    expect(seen.map((s) => s.method)).toEqual(['POST', 'POST']);

    seen.length = 0;
    script = [{ status: 502, body: { error: { code: 'bad_gateway', message: 'upstream' } } }];
    await expect(tenantClient({ baseUrl }).createCannedResponse({ shortCode: 'hi', content: 'Hello' })).rejects.toMatchObject({
      code: 'bad_gateway',
      status: 502,
    });
    expect(seen).toHaveLength(1);

    // The same POST with an idempotency key is safe to repeat, and repeats with the same key.
    seen.length = 0;
    script = [{ status: 502, body: {} }];
    await tenantClient({ baseUrl }).reply(7, { text: 'hi' }, { idempotencyKey: 'k-1' });
    expect(seen.map((s) => s.idempotencyKey)).toEqual(['k-1', 'k-1']);
  });

  it('backs off longer at each try when no retry-after is given, and gives up after `retries`', async () => {
    script = [refused(503), refused(503), refused(503)];
    const err = await tenantClient({ baseUrl, retries: 2 })
      .labels()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InboxClientError);
    expect(err).toMatchObject({ code: 'unavailable', status: 503 });
    expect(seen).toHaveLength(3);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThan(seen[1]!.at - seen[0]!.at);
  });

  it('raises at once when retry-after asks longer than maxRetryDelayMs, carrying the wait', async () => {
    script = [refused(429, '120')];
    const err = await tenantClient({ baseUrl, maxRetryDelayMs: 60_000 })
      .labels()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 120 });
    expect(seen).toHaveLength(1);
  });

  it('does not retry with retries: 0', async () => {
    script = [refused(503, '0')];
    await expect(tenantClient({ baseUrl, retries: 0 }).labels()).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('reads retry-after as delta-seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(retryAfterMs(new Date(now - 5000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe('timeouts and aborts', () => {
  it('ends an attempt that gets no answer within timeoutMs with `timeout`; a POST is not repeated', async () => {
    script = ['hang'];
    const started = Date.now();
    const err = await tenantClient({ baseUrl, timeoutMs: 200 })
      .createCannedResponse({ shortCode: 'x', content: 'y' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'timeout', status: 0 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(seen).toHaveLength(1);
  });

  it('repeats a GET that timed out, which then answers', async () => {
    script = ['hang'];
    expect(await tenantClient({ baseUrl, timeoutMs: 200 }).labels()).toEqual({ ok: true });
    expect(seen).toHaveLength(2);
  });

  it('rejects with the signal’s reason when aborted in flight, and does not retry', async () => {
    script = ['hang'];
    const controller = new AbortController();
    const pending = tenantClient({ baseUrl, signal: controller.signal })
      .labels()
      .catch((e: unknown) => e);
    await waitFor(async () => seen.length === 1, 'the request to arrive');
    const reason = new Error('the user left');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    expect(seen).toHaveLength(1);
  });

  it('rejects at once when aborted while waiting for retry-after', async () => {
    script = [refused(503, '30')];
    const controller = new AbortController();
    const started = Date.now();
    const pending = tenantClient({ baseUrl, signal: controller.signal })
      .labels()
      .catch((e: unknown) => e);
    await waitFor(async () => seen.length === 1, 'the first attempt');
    controller.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(seen).toHaveLength(1);
  });

  it('refuses to start with an already aborted signal', async () => {
    await expect(tenantClient({ baseUrl, signal: AbortSignal.abort() }).labels()).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(0);
  });
});
