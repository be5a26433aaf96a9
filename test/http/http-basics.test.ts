import { once } from 'node:events';
import { type AddressInfo, connect } from 'node:net';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createDatabase } from '../../src/db/database.js';
import { METRICS_COLLECT_INTERVAL_MS, QUEUE_DEPTH_STATES } from '../../src/health/health.routes.js';
import { queues } from '../../src/jobs/registry.js';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { ADMIN_KEY, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

// The service's clock runs with the real one; the metrics test moves it past a scrape's cache.
let clockOffsetMs = 0;
const ctx = await useTestContext({ env: { INBOX_BODY_LIMIT_BYTES: '2048' }, now: () => new Date(Date.now() + clockOffsetMs) });

describe('request ids', () => {
  it('generates one per request and returns it as a header and in meta', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const a = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers });
    const b = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers });
    expect(a.headers['x-request-id']).toEqual(a.json().meta.requestId);
    expect(a.headers['x-request-id']).not.toEqual(b.headers['x-request-id']);
  });

  it('honours a well-formed incoming x-request-id and replaces a malformed one', async () => {
    const kept = await ctx.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123.abc' } });
    expect(kept.headers['x-request-id']).toBe('trace-123.abc');
    const replaced = await ctx.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('error envelope', () => {
  it('answers an unknown route with 404 not_found', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: { code: 'not_found', message: expect.any(String) },
      meta: { requestId: res.headers['x-request-id'] },
    });
  });

  it('answers a path the router refuses (bad escape, overlong parameter) in the error envelope', async () => {
    for (const [url, status] of [
      ['/v1/threads/%E0%A4%A', 400],
      [`/csat/${'a'.repeat(300)}`, 414],
    ] as const) {
      const res = await ctx.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(status);
      expect(res.json(), url).toEqual({
        error: { code: 'bad_request', message: expect.any(String) },
        meta: { requestId: res.headers['x-request-id'] },
      });
    }
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...(await makeTenant(ctx.deps)).headers, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_json');
  });

  it('takes an empty body sent as application/json as no body', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const json = { ...headers, accept: 'application/json', 'content-type': 'application/json' };
    // A POST that takes no body answers as it would without the header…
    const requeue = await ctx.app.inject({
      method: 'POST',
      url: '/v1/admin/webhook-inbox/01900000-0000-7000-8000-000000000000/requeue',
      headers: json,
    });
    expect(requeue.statusCode).toBe(404);
    expect(requeue.json().error.code).toBe('not_found');
    // …and one that takes a body says it is missing.
    const create = await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers: json });
    expect(create.statusCode).toBe(422);
    expect(create.json().error.code).toBe('validation_failed');
  });

  it('answers an oversized body with 413 payload_too_large', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...(await makeTenant(ctx.deps)).headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(4096) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: { ...(await makeTenant(ctx.deps)).headers, 'content-type': 'application/xml' },
      payload: '<name/>',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error).toEqual({
      code: 'unsupported_media_type',
      message: 'content type "application/xml" is not accepted here; send application/json',
    });
    // A body sent with no content type at all says so.
    const bare = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: (await makeTenant(ctx.deps)).headers,
      payload: Buffer.from('name=x'),
    });
    expect(bare.statusCode).toBe(415);
    expect(bare.json().error.message).toBe('a body without a content type is not accepted here; send application/json');
  });

  it('answers JSON sent as text/plain with 415 like any other type, and takes an empty one as no body', async () => {
    const { headers } = await makeTenant(ctx.deps);
    for (const contentType of ['text/plain', 'text/plain; charset=utf-8']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: { ...headers, 'content-type': contentType },
        payload: JSON.stringify({ name: 'k' }),
      });
      expect(res.statusCode, res.body).toBe(415);
      expect(res.json().error).toEqual({
        code: 'unsupported_media_type',
        message: `content type "${contentType}" is not accepted here; send application/json`,
      });
    }
    expect(await ctx.deps.db.selectFrom('api_keys').select('id').where('name', '=', 'k').execute()).toEqual([]);
    const requeue = await ctx.app.inject({
      method: 'POST',
      url: '/v1/admin/webhook-inbox/01900000-0000-7000-8000-000000000000/requeue',
      headers: { ...headers, 'content-type': 'text/plain' },
    });
    expect(requeue.statusCode).toBe(404);
  });

  it('answers what the HTTP parser refuses (malformed, oversized headers) in the error envelope', async () => {
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    // Written on a raw socket: no client library sends these.
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(text));
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    for (const [request, status] of [
      ['GET /v1/threads HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n', 400],
      ['POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
      [`GET /v1/threads HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ] as const) {
      const answer = await send(request);
      const [head, body] = answer.split('\r\n\r\n') as [string, string];
      expect(head.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
      const parsed = JSON.parse(body);
      expect(parsed).toEqual({ error: { code: 'bad_request', message: expect.any(String) }, meta: { requestId: expect.any(String) } });
      expect(head).toContain(`x-request-id: ${parsed.meta.requestId}`);
    }
  });

  it('answers wrong types and missing fields with 422 validation_failed naming the field', async () => {
    const { headers } = await makeTenant(ctx.deps);
    const wrongType = await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: { name: 5 } });
    expect(wrongType.statusCode).toBe(422);
    expect(wrongType.json().error).toEqual({ code: 'validation_failed', message: 'body.name must be string' });
    const missing = await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: {} });
    expect(missing.json().error).toEqual({ code: 'validation_failed', message: 'body must have property "name"' });
  });
});

describe('health and metrics', () => {
  it('GET /healthz and /readyz answer when the database and queue answer', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });

  it('GET /readyz is 503 when the database is gone', async () => {
    // The same app wiring, with a database that refuses connections (nothing listens on port 1).
    const gone = createDatabase('postgres://inbox:inbox@127.0.0.1:1/inbox');
    const app = await buildApp({ ...ctx.deps, db: gone.db, pool: gone.pool });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
    } finally {
      await app.close();
      await gone.close();
    }
  });

  it('GET /metrics serves Prometheus text with HTTP requests by route and status, queue depth and process figures', async () => {
    await ctx.app.inject({ method: 'GET', url: '/healthz' });
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/inbox_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(res.body).toContain('# TYPE inbox_queue_jobs gauge');
    expect(res.body).toMatch(/^process_resident_memory_bytes \d+$/m);
  });
});

describe('request metrics', () => {
  it('counts each request once, however often /metrics is read', async () => {
    const read = async () => {
      const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
      const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
      return [
        value(/^inbox_http_requests_total\{method="GET",route="\/healthz",status="200"\} (\d+)$/m),
        value(/^inbox_http_request_duration_seconds_count\{method="GET",route="\/healthz"\} (\d+)$/m),
      ];
    };
    const [requests, durations] = await read();
    for (let i = 0; i < 3; i++) expect((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(await read()).toEqual([requests! + 3, durations! + 3]);
    expect(await read()).toEqual([requests! + 3, durations! + 3]);
  });
});

describe('inbox_queue_jobs', () => {
  it('has a sample for every queue and state, 0 when idle, the count of jobs otherwise', async () => {
    const sample = (body: string, queue: string, state: string) => {
      const m = new RegExp(`^inbox_queue_jobs\\{queue="${queue}",state="${state}"\\} (\\d+)$`, 'm').exec(body);
      return m ? Number(m[1]) : undefined;
    };
    const counted = async () => {
      const { rows } = await sql<{ name: string; state: string; n: number }>`
        SELECT name, state::text AS state, count(*)::int AS n FROM pgboss.job GROUP BY name, state`.execute(ctx.deps.db);
      return (queue: string, state: string) => rows.find((r) => r.name === queue && r.state === state)?.n ?? 0;
    };
    const scrape = async () => (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;

    let body = await scrape();
    let actual = await counted();
    for (const q of queues)
      for (const state of QUEUE_DEPTH_STATES) expect(sample(body, q.name, state), `${q.name} ${state}`).toBe(actual(q.name, state));
    expect(sample(body, maintenanceQueue.name, 'created')).toBe(0);

    await ctx.deps.boss.send(maintenanceQueue.name, {});
    // Queue depths are read at most once per interval; the next scrape comes after it.
    clockOffsetMs += METRICS_COLLECT_INTERVAL_MS;
    body = await scrape();
    actual = await counted();
    expect(sample(body, maintenanceQueue.name, 'created')).toBe(1);
    for (const q of queues)
      for (const state of QUEUE_DEPTH_STATES) expect(sample(body, q.name, state), `${q.name} ${state}`).toBe(actual(q.name, state));
  });
});

describe('ids beyond a column’s range', () => {
  it('answer 404 or 422, never a database error', async () => {
    const tenant = await makeTenant(ctx.deps);
    const admin = { 'x-service-admin-api-key': ADMIN_KEY, 'content-type': 'application/json' };
    // int4 columns end at 2^31-1, bigint ones (as JS numbers) at 2^53-1; 1e20 fits neither.
    for (const id of ['2147483648', '9007199254740993', '100000000000000000000', '1e30']) {
      const calls = [
        { method: 'GET' as const, url: `/v1/threads/${id}`, headers: tenant.headers },
        { method: 'GET' as const, url: `/v1/threads/${id}/messages`, headers: tenant.headers },
        { method: 'POST' as const, url: `/v1/api-keys/${id}/rotate`, headers: tenant.headers },
        { method: 'DELETE' as const, url: `/v1/api-keys/${id}`, headers: tenant.headers },
        { method: 'GET' as const, url: `/v1/operator/tenants/${id}/threads/1/messages`, headers: admin },
        { method: 'GET' as const, url: `/v1/operator/tenants/1/threads/${id}/messages`, headers: admin },
        { method: 'GET' as const, url: `/v1/operator/connections?workspaceId=${id}`, headers: admin },
        {
          method: 'POST' as const,
          url: `/v1/engage/workspaces/${id}/connections`,
          headers: admin,
          payload: { integrationKey: 'sms', externalAccountId: 'x', name: 'x' },
        },
      ];
      for (const call of calls) {
        const res = await ctx.app.inject(call);
        expect([404, 422], `${call.method} ${call.url} → ${res.statusCode} ${res.body}`).toContain(res.statusCode);
      }
    }
  });
});

describe('shutting down', () => {
  it('finishes the request in flight and refuses the next one on its connection in the envelope, writing nothing', async () => {
    const tenant = await makeTenant(ctx.deps, { scopes: ['admin'] });
    const app = await buildApp(ctx.deps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    await once(socket, 'connect');
    const head = (body: string) =>
      [
        'POST /v1/api-keys HTTP/1.1',
        'host: inbox.test',
        'content-type: application/json',
        `content-length: ${body.length}`,
        ...Object.entries(tenant.headers).map(([k, v]) => `${k}: ${v}`),
        '',
        '',
      ].join('\r\n');
    const first = JSON.stringify({ name: 'in flight' });
    const second = JSON.stringify({ name: 'after the close' });
    // The first request's headers and half its body arrive: it is in flight when the close begins.
    const arrived = once(app.server, 'request');
    socket.write(head(first) + first.slice(0, 5));
    await arrived;
    const closed = app.close();
    await waitFor(async () => !app.server.listening, 'the server to stop listening');
    // The rest of the first body, and a second request pipelined behind it.
    socket.write(first.slice(5) + head(second) + second);
    await once(socket, 'close');
    await closed;

    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses.map((r) => r.split('\r\n')[0])).toEqual(['HTTP/1.1 201 Created', 'HTTP/1.1 503 Service Unavailable']);
    const refused = responses[1]!;
    const requestId = /x-request-id: (\S+)/.exec(refused)?.[1];
    expect(refused).toMatch(/\r\nretry-after: 1\r\n/);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'unavailable', message: 'the service is shutting down; retry shortly' },
      meta: { requestId },
    });
    const keys = await ctx.app.inject({ method: 'GET', url: '/v1/api-keys', headers: tenant.headers });
    const names = keys.json().data.map((k: { name: string }) => k.name);
    expect(names).toContain('in flight');
    expect(names).not.toContain('after the close');
  });
});
