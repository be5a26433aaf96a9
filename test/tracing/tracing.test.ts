import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as undiciRequest } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { inSpan, startTracing, stopTracing } from '../../src/tracing/tracing.js';
import { adminHeaders, testConfig, useTestContext } from '../helpers/app.js';
import { type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from '../helpers/otlp.js';
import { waitFor } from '../helpers/webhooks.js';

// Tracing starts before the app and its pools, as `inbox serve` starts it.
const receiver = await startOtlpReceiver();
afterAll(() => receiver.close());
const traced = await startTracing({ endpoint: receiver.url, role: 'all', version: 'test' });
afterAll(() => stopTracing());
const ctx = await useTestContext();

/** Spans matching `pick`, once the exporter has sent them. */
async function spansWhere(pick: (s: ReceivedSpan) => boolean, what: string, atLeast = 1): Promise<ReceivedSpan[]> {
  return waitFor(async () => {
    await traced.flush();
    const found = receiver.spans.filter(pick);
    return found.length >= atLeast ? found : undefined;
  }, what);
}

/**
 * A request over a real socket, with node:http (which is not traced), so the body arrives in
 * events of its own, as a provider's does.
 */
function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    // The body comes after the headers, in a later write: the handler starts only once it is read.
    req.flushHeaders();
    setImmediate(() => req.end(body));
  });
}

/** A loopback server that records the traceparent of each call. */
async function startEchoServer() {
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.traceparent as string | undefined);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe('OpenTelemetry over OTLP/HTTP', () => {
  it('traces a request under its route, continuing the caller’s traceparent, with its statements inside', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const status = await post(
      `${base}/v1/engage/workspaces`,
      { ...adminHeaders(), traceparent: `00-${traceId}-${callerSpan}-01` },
      JSON.stringify({ name: 'Traced workspace' }),
    );
    expect(status).toBe(201);
    const [server] = await spansWhere((s) => s.traceId === traceId && s.kind === SPAN_KIND.server, 'the request span');
    expect(server!.name).toBe('POST /v1/engage/workspaces');
    expect(server!.parentSpanId).toBe(callerSpan);
    expect(server!.attributes['http.route']).toBe('/v1/engage/workspaces');
    expect(server!.attributes['http.response.status_code']).toBe(201);
    expect(server!.resource['service.name']).toBe('inbox');
    // The handler runs after the body was read from the socket: its statements are still inside.
    const statements = await spansWhere(
      (s) => s.parentSpanId === server!.spanId && s.attributes['db.system.name'] === 'postgresql',
      'the request’s statements',
    );
    const insert = statements.find((s) => s.name === 'INSERT');
    expect(insert?.attributes['db.query.text']).toMatch(/^insert into "workspaces"/);
    expect(insert?.kind).toBe(SPAN_KIND.client);
    expect(receiver.exports.every((e) => e.path === '/v1/traces' && e.contentType === 'application/json')).toBe(true);
  });

  it('names a request span by its route, never its path', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/api-keys/secret-looking-path' });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    const requestId = res.headers['x-request-id'];
    const [span] = await spansWhere((s) => s.attributes['inbox.request_id'] === requestId, 'the refused request’s span');
    expect(JSON.stringify(span)).not.toContain('secret-looking-path');
  });

  it('traces outbound calls of global fetch and undici as children that carry the traceparent', async () => {
    const echo = await startEchoServer();
    await inSpan('outbound calls', [], {}, async () => {
      await fetch(`${echo.url}/with-fetch`, { method: 'POST', body: 'x' });
      await (await undiciRequest(`${echo.url}/with-undici`)).body.dump();
    });
    const [outer] = await spansWhere((s) => s.name === 'outbound calls', 'the outer span');
    const calls = await spansWhere((s) => s.parentSpanId === outer!.spanId && s.kind === SPAN_KIND.client, 'both calls', 2);
    expect(calls.map((c) => c.name).sort()).toEqual(['GET', 'POST']);
    for (const call of calls) {
      expect(call.traceId).toBe(outer!.traceId);
      expect(call.attributes['server.address']).toBe('127.0.0.1');
      expect(call.attributes['http.response.status_code']).toBe(204);
      expect(echo.seen).toContain(`00-${call.traceId}-${call.spanId}-01`);
    }
  });

  it('leaves statements outside any request or job untraced', async () => {
    await ctx.deps.pool.query('SELECT 1 AS untraced_probe');
    await inSpan('probe marker', [], {}, async () => {
      await ctx.deps.pool.query('SELECT 1 AS traced_probe');
    });
    await spansWhere((s) => String(s.attributes['db.query.text']).includes('traced_probe'), 'the traced statement');
    expect(receiver.spans.some((s) => String(s.attributes['db.query.text']).includes('untraced_probe'))).toBe(false);
  });
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('must be an http(s) URL, or the start fails naming it', () => {
    expect(() => testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: expected an http\(s\) URL/,
    );
    expect(testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otelEndpoint).toBe('http://collector:4318');
    expect(testConfig().otelEndpoint).toBeUndefined();
  });
});
