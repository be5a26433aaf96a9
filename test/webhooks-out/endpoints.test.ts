import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../packages/client/src/webhooks.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

// The guard is on here (no INBOX_ALLOW_PRIVATE_WEBHOOK_URLS): literal private addresses are refused.
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const other = await makeTenant(ctx.deps);

const call = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  headers: Record<string, string> = tenant.headers,
) => ctx.app.inject({ method, url: `/v1/webhook-endpoints${url}`, headers, ...(payload ? { payload } : {}) });
const create = (payload: object, headers?: Record<string, string>) => call('POST', '', payload, headers);

describe('webhook endpoint routes', () => {
  it('creates an endpoint with a secret shown once, subscribed to every event and signed with the service scheme by default', async () => {
    const res = await create({ url: 'https://hooks.example.com/inbox', description: 'CRM' });
    expect(res.statusCode).toBe(201);
    const { data } = res.json();
    expect(data).toMatchObject({
      url: 'https://hooks.example.com/inbox',
      description: 'CRM',
      events: ['*'],
      enabled: true,
      signatureScheme: 'service',
      disabledReason: null,
    });
    expect(data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const got = await call('GET', `/${data.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data).not.toHaveProperty('secret');
    const listed = await call('GET', '');
    expect(listed.json().data.find((e: { id: number }) => e.id === data.id)).not.toHaveProperty('secret');
    // Sealed at rest: the secret's text is nowhere in the row.
    const row = await ctx.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', data.id).executeTakeFirstOrThrow();
    expect(row.secret_sealed.toString('latin1')).not.toContain(data.secret.slice(6, 30));
  });

  it('answers the URL as it was given, not rewritten by a parser (no slash added to a bare host)', async () => {
    const res = await create({ url: 'https://Hooks.example.com:8443' });
    expect(res.statusCode, res.body).toBe(201);
    const { id, url } = res.json().data;
    expect(url).toBe('https://Hooks.example.com:8443');
    expect((await call('GET', `/${id}`)).json().data.url).toBe('https://Hooks.example.com:8443');
    const patched = await call('PATCH', `/${id}`, { url: 'http://hooks.example.com?source=inbox' });
    expect(patched.json().data.url).toBe('http://hooks.example.com?source=inbox');
    // A parser drops a tab or line break inside a URL; kept as given, such a URL is refused.
    for (const url of ['https://hooks.exa\tmple.com/x', 'https://hooks.example.com/a\nb']) {
      expect((await create({ url })).statusCode, JSON.stringify(url)).toBe(422);
      expect((await call('PATCH', `/${id}`, { url })).statusCode, JSON.stringify(url)).toBe(422);
    }
  });

  it('refuses what is not an http(s) URL, a literal private address, credentials in the URL, unknown event types and malformed secrets (422)', async () => {
    for (const url of [
      'ftp://hooks.example.com/x',
      'not a url',
      'javascript:alert(1)',
      'http://127.0.0.1:8080/hook',
      'http://10.1.2.3/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[::ffff:192.168.0.1]/',
      'http://[::127.0.0.1]/',
      'http://100.64.0.1/',
      'http://0x7f000001/',
      'https://user:pw@hooks.example.com/',
    ]) {
      const res = await create({ url });
      expect(res.statusCode, url).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await create({ url: 'https://hooks.example.com/', events: ['message.deleted'] })).statusCode).toBe(422);
    expect((await create({ url: 'https://hooks.example.com/', events: [] })).statusCode).toBe(422);
    expect((await create({ url: 'https://hooks.example.com/', secret: 'too-short' })).statusCode).toBe(422);
    expect((await create({ url: 'https://hooks.example.com/', signatureScheme: 'hmac' })).statusCode).toBe(422);
    expect(
      await ctx.deps.db
        .selectFrom('webhook_endpoints')
        .select('id')
        .where('workspace_id', '=', tenant.workspace.id)
        .where('url', 'like', '%10.1.2.3%')
        .execute(),
    ).toEqual([]);
  });

  it('accepts a secret the customer brings, and a name (checked when it is resolved, not now)', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const res = await create({
      url: 'http://localhost:9/hook',
      secret,
      events: ['message.created', 'thread.created'],
      signatureScheme: 'standard',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ secret, events: ['message.created', 'thread.created'], signatureScheme: 'standard' });
  });

  it('refuses a brought secret that is not canonical base64, which strict decoders (and the typed client) cannot read', async () => {
    for (const tail of ['A'.repeat(33), `${'A'.repeat(32)}=`, 'A'.repeat(34), `${'A'.repeat(42)}B=`, 'A'.repeat(86)]) {
      const res = await create({ url: 'https://hooks.example.com/', secret: `whsec_${tail}`, signatureScheme: 'standard' });
      expect(res.statusCode, tail).toBe(422);
      expect(res.json().error.message).toMatch(/^secret: /);
    }
    // Canonical forms are kept: 24 bytes without padding (as other senders issue), 64 with.
    for (const bytes of [24, 25, 64]) {
      const secret = `whsec_${Buffer.alloc(bytes, bytes).toString('base64')}`;
      const res = await create({ url: 'https://hooks.example.com/', secret, signatureScheme: 'standard' });
      expect(res.statusCode, secret).toBe(201);
      // A receiver holding it verifies a delivery signed with its bytes.
      const body = '{"type":"ping"}';
      const ts = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', Buffer.alloc(bytes, bytes)).update(`7.${ts}.${body}`).digest('base64');
      const headers = { 'webhook-id': '7', 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${signature}` };
      await expect(verifyWebhook({ body, headers, secret })).resolves.toMatchObject({ scheme: 'standard' });
    }
  });

  it('patches url, events, scheme and enabled; enabling clears the reason the service disabled it', async () => {
    const { id } = (await create({ url: 'https://a.example.com/' })).json().data;
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ enabled: false, disabled_reason: 'the endpoint answered 410 Gone' })
      .where('id', '=', id)
      .execute();
    expect((await call('GET', `/${id}`)).json().data).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
    const res = await call('PATCH', `/${id}`, {
      enabled: true,
      url: 'https://b.example.com/x',
      events: ['message.updated'],
      signatureScheme: 'standard',
      description: 'moved',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      enabled: true,
      disabledReason: null,
      url: 'https://b.example.com/x',
      events: ['message.updated'],
      signatureScheme: 'standard',
      description: 'moved',
    });
    expect((await call('PATCH', `/${id}`, { url: 'http://192.168.1.1/' })).statusCode).toBe(422);
    expect((await call('GET', `/${id}`)).json().data.url).toBe('https://b.example.com/x');
  });

  it('rotates the secret: a new one, answered once; graceSeconds is bounded', async () => {
    const first = (await create({ url: 'https://r.example.com/' })).json().data;
    const rotated = await call('POST', `/${first.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json().data.secret).toMatch(/^whsec_/);
    expect(rotated.json().data.secret).not.toBe(first.secret);
    const row = await ctx.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(row.previous_secret_sealed).not.toBeNull();
    expect(row.previous_secret_expires_at!.getTime() - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect((await call('POST', `/${first.id}/rotate-secret?graceSeconds=604801`)).statusCode).toBe(422);
    expect((await call('POST', `/${first.id}/rotate-secret?graceSeconds=-1`)).statusCode).toBe(422);
    const none = await call('POST', `/${first.id}/rotate-secret?graceSeconds=0`);
    expect(none.statusCode).toBe(200);
    const after = await ctx.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', first.id).executeTakeFirstOrThrow();
    expect(after.previous_secret_sealed).toBeNull();
  });

  it('deletes (200, the id in the envelope), then 404; another workspace sees none of it', async () => {
    const { id } = (await create({ url: 'https://d.example.com/' })).json().data;
    for (const [method, url] of [
      ['GET', `/${id}`],
      ['PATCH', `/${id}`],
      ['DELETE', `/${id}`],
      ['POST', `/${id}/rotate-secret`],
      ['POST', `/${id}/test`],
      ['GET', `/${id}/deliveries`],
    ] as const) {
      const res = await call(method, url, method === 'PATCH' ? { description: 'x' } : undefined, other.headers);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await call('GET', '', undefined, other.headers)).json().data.some((e: { id: number }) => e.id === id)).toBe(false);
    const removed = await call('DELETE', `/${id}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data).toEqual({ id, deleted: true });
    expect((await call('DELETE', `/${id}`)).statusCode).toBe(404);
    expect((await call('GET', `/${id}`)).statusCode).toBe(404);
  });

  it('deleted while it is tested and a delivery of it redelivered: 202 or 404, never 500', async () => {
    for (let round = 0; round < 3; round++) {
      const { id } = (await create({ url: 'https://hooks.example.com/deleted' })).json().data;
      const ping = await call('POST', `/${id}/test`);
      expect(ping.statusCode, ping.body).toBe(202);
      const answers = await Promise.all([
        call('DELETE', `/${id}`),
        call('POST', `/${id}/test`),
        call('POST', `/deliveries/${ping.json().data.id}/redeliver`),
      ]);
      expect(answers[0]!.statusCode).toBe(200);
      for (const res of answers.slice(1)) expect([202, 404], res.body).toContain(res.statusCode);
      const left = await ctx.deps.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id).execute();
      expect(left).toEqual([]);
    }
  });

  it('is for workspace admins only: read and write keys get 403, no credential 401', async () => {
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    const writer = await makeTenant(ctx.deps, { scopes: ['read', 'write'] });
    for (const t of [reader, writer]) {
      expect((await call('GET', '', undefined, t.headers)).statusCode).toBe(403);
      expect((await create({ url: 'https://x.example.com/' }, t.headers)).statusCode).toBe(403);
    }
    expect((await call('GET', '', undefined, {})).statusCode).toBe(401);
    expect((await call('POST', '/deliveries/1/redeliver', undefined, reader.headers)).statusCode).toBe(403);
  });

  it('pages endpoints by cursor, newest first', async () => {
    const t = await makeTenant(ctx.deps);
    for (let i = 0; i < 3; i++) expect((await create({ url: `https://p${i}.example.com/` }, t.headers)).statusCode).toBe(201);
    const first = await call('GET', '?limit=2', undefined, t.headers);
    expect(first.json().data.map((e: { url: string }) => e.url)).toEqual(['https://p2.example.com/', 'https://p1.example.com/']);
    const second = await call('GET', `?limit=2&cursor=${first.json().meta.nextCursor}`, undefined, t.headers);
    expect(second.json().data.map((e: { url: string }) => e.url)).toEqual(['https://p0.example.com/']);
    expect(second.json().meta.nextCursor).toBeUndefined();
    expect((await call('GET', '?cursor=bad!', undefined, t.headers)).statusCode).toBe(422);
  });

  it('redeliver: 404 for a delivery of another workspace or none', async () => {
    expect((await call('POST', '/deliveries/999999/redeliver')).statusCode).toBe(404);
  });
});
