import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { InboxStatus } from '../../src/db/types.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();
const mine = await makeTenant(ctx.deps);
const theirs = await makeTenant(ctx.deps);

async function inboxRow(appId: string | null, status: InboxStatus, extra: { lastError?: string; attempts?: number; key?: string } = {}) {
  const id = randomUUID();
  await ctx.deps.db
    .insertInto('webhook_inbox')
    .values({
      id,
      integration_key: extra.key ?? 'whatsapp',
      app_id: appId,
      raw_body: '{}',
      payload_json: '{}',
      event: null,
      status,
      last_error: extra.lastError ?? null,
      attempt_count: extra.attempts ?? 0,
      processed_at: status === 'processed' ? new Date() : null,
    })
    .execute();
  return id;
}

const list = (headers: Record<string, string>, query = '') =>
  ctx.app.inject({ method: 'GET', url: `/v1/admin/webhook-inbox${query}`, headers });
const requeue = (headers: Record<string, string>, id: string, extra: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: `/v1/admin/webhook-inbox/${id}/requeue`, headers: { ...headers, ...extra } });

describe('GET /v1/admin/webhook-inbox', () => {
  it("lists the caller's dead letters by default, never another app's", async () => {
    const dead = await inboxRow(mine.workspace.appId, 'dead_letter', { lastError: 'no connection', attempts: 8 });
    const foreign = await inboxRow(theirs.workspace.appId, 'dead_letter');
    await inboxRow(mine.workspace.appId, 'failed');
    const body = (await list(mine.headers)).json();
    const ids = body.data.map((r: { id: string }) => r.id);
    expect(ids).toContain(dead);
    expect(ids).not.toContain(foreign);
    expect(body.data.every((r: { status: string }) => r.status === 'dead_letter')).toBe(true);
    expect(body.data.find((r: { id: string }) => r.id === dead)).toMatchObject({
      id: dead,
      integrationKey: 'whatsapp',
      lastError: 'no connection',
      attemptCount: 8,
      appId: mine.workspace.appId,
    });
  });

  it('returns no bodies: rawBody and payloadJson only come one row at a time', async () => {
    await inboxRow(mine.workspace.appId, 'dead_letter');
    const lists = [
      await list(mine.headers),
      await ctx.app.inject({ method: 'GET', url: '/v1/operator/webhook-inbox', headers: adminHeaders() }),
    ];
    for (const res of lists) {
      expect(res.json().data.length).toBeGreaterThan(0);
      for (const row of res.json().data) {
        expect(row).not.toHaveProperty('rawBody');
        expect(row).not.toHaveProperty('payloadJson');
        expect(Object.keys(row).sort()).toEqual([
          'appId',
          'attemptCount',
          'createdAt',
          'event',
          'id',
          'integrationKey',
          'lastError',
          'nextRetryAt',
          'processedAt',
          'status',
          'updatedAt',
          'verification',
        ]);
      }
    }
  });

  it('lists rows still in flight with status=failed and status=received', async () => {
    const failed = await inboxRow(mine.workspace.appId, 'failed');
    const received = await inboxRow(mine.workspace.appId, 'received');
    expect((await list(mine.headers, '?status=failed')).json().data.map((r: { id: string }) => r.id)).toContain(failed);
    expect((await list(mine.headers, '?status=received')).json().data.map((r: { id: string }) => r.id)).toContain(received);
    expect((await list(mine.headers, '?status=bogus')).statusCode).toBe(422);
  });

  it('takes an empty status as none: the dead letters', async () => {
    const dead = await inboxRow(mine.workspace.appId, 'dead_letter');
    const res = await list(mine.headers, '?status=&limit=500');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((r: { id: string }) => r.id)).toContain(dead);
    expect(res.json().data.every((r: { status: string }) => r.status === 'dead_letter')).toBe(true);
  });

  it('returns at most 100 rows by default and honours limit', async () => {
    const tenant = await makeTenant(ctx.deps);
    for (let i = 0; i < 105; i++) await inboxRow(tenant.workspace.appId, 'dead_letter');
    expect((await list(tenant.headers)).json().data).toHaveLength(100);
    expect((await list(tenant.headers, '?limit=7')).json().data).toHaveLength(7);
  });

  it('requires the admin scope', async () => {
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    expect((await list(reader.headers)).statusCode).toBe(403);
    expect((await list({})).statusCode).toBe(401);
  });
});

describe('GET /v1/admin/webhook-inbox/:id and GET /v1/operator/webhook-inbox/:id', () => {
  const getOne = (prefix: string, id: string, headers: Record<string, string>) =>
    ctx.app.inject({ method: 'GET', url: `/v1/${prefix}/webhook-inbox/${id}`, headers });
  const fields = [
    'appId',
    'attemptCount',
    'createdAt',
    'event',
    'id',
    'integrationKey',
    'lastError',
    'nextRetryAt',
    'payloadJson',
    'processedAt',
    'rawBody',
    'status',
    'updatedAt',
    'verification',
  ];

  it("answers the admin's own row with every field, its body included", async () => {
    const id = await inboxRow(mine.workspace.appId, 'dead_letter', { lastError: 'boom', attempts: 8 });
    const res = await getOne('admin', id, mine.headers);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().data).sort()).toEqual(fields);
    expect(res.json().data).toMatchObject({
      id,
      appId: mine.workspace.appId,
      rawBody: '{}',
      payloadJson: {},
      status: 'dead_letter',
      lastError: 'boom',
      attemptCount: 8,
    });
  });

  it("answers not_found for another app's row, an unresolved row, an unknown id and a malformed id", async () => {
    const foreign = await inboxRow(theirs.workspace.appId, 'dead_letter');
    const unresolved = await inboxRow(null, 'failed');
    for (const id of [foreign, unresolved, randomUUID(), 'not-a-uuid']) {
      const res = await getOne('admin', id, mine.headers);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    expect((await getOne('admin', foreign, reader.headers)).statusCode).toBe(403);
  });

  it('answers the operator any row, unresolved ones included, and not_found for what does not exist', async () => {
    const foreign = await inboxRow(theirs.workspace.appId, 'processed');
    const unresolved = await inboxRow(null, 'failed');
    for (const id of [foreign, unresolved]) {
      const res = await getOne('operator', id, adminHeaders());
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json().data).sort()).toEqual(fields);
      expect(res.json().data).toMatchObject({ id, rawBody: '{}', payloadJson: {} });
    }
    for (const id of [randomUUID(), 'not-a-uuid'])
      expect((await getOne('operator', id, adminHeaders())).json().error.code).toBe('not_found');
    expect((await getOne('operator', foreign, mine.headers)).statusCode).toBe(403);
  });
});

describe('POST /v1/operator/webhook-inbox/:id/requeue', () => {
  const opRequeue = (id: string, extra: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'POST', url: `/v1/operator/webhook-inbox/${id}/requeue`, headers: { ...adminHeaders(), ...extra } });
  const jobs = async (id: string) =>
    (
      await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id}`.execute(
        ctx.deps.db,
      )
    ).rows[0]!.n;

  it("requeues any app's row and an unresolved one, answering the status before", async () => {
    for (const [appId, status] of [
      [theirs.workspace.appId, 'dead_letter'],
      [null, 'failed'],
    ] as const) {
      const id = await inboxRow(appId, status, { lastError: 'boom', attempts: 3 });
      const res = await opRequeue(id);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ id, status });
      const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        status: 'received',
        attempt_count: 0,
        last_error: null,
        processed_at: null,
        next_retry_at: null,
        app_id: appId,
      });
      expect(await jobs(id)).toBe(1);
    }
  });

  it('answers not_found for an unknown or malformed id, 409 unless failed or dead_letter, and refuses tenants', async () => {
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await opRequeue(id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    for (const status of ['processed', 'received'] as const) {
      const res = await opRequeue(await inboxRow(null, status));
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('conflict');
    }
    const id = await inboxRow(mine.workspace.appId, 'dead_letter');
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/operator/webhook-inbox/${id}/requeue`, headers: mine.headers })).statusCode,
    ).toBe(403);
  });

  it('replays an idempotency-key in a key space of its own, apart from every app', async () => {
    const id = await inboxRow(null, 'dead_letter');
    const key = { 'idempotency-key': `op-${randomUUID()}` };
    const first = await opRequeue(id, key);
    const second = await opRequeue(id, key);
    expect(second.statusCode).toBe(200);
    expect(second.json().data).toEqual({ id, status: 'dead_letter' });
    expect(second.json().data).toEqual(first.json().data);
    expect(await jobs(id)).toBe(1);
    expect((await opRequeue(await inboxRow(null, 'dead_letter'), key)).statusCode).toBe(409);
    // The same key from a tenant is that tenant's own: neither answer is replayed to the other.
    const own = await inboxRow(mine.workspace.appId, 'failed');
    const tenantAnswer = await requeue(mine.headers, own, key);
    expect(tenantAnswer.statusCode).toBe(200);
    expect(tenantAnswer.json().data).toEqual({ id: own, status: 'failed' });
  });
});

describe('POST /v1/admin/webhook-inbox/:id/requeue', () => {
  it('resets a dead letter to received, clears its error, enqueues it and answers with the status before', async () => {
    const id = await inboxRow(mine.workspace.appId, 'dead_letter', { lastError: 'boom', attempts: 8 });
    const res = await requeue(mine.headers, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id, status: 'dead_letter' });
    const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'received', attempt_count: 0, last_error: null, processed_at: null, next_retry_at: null });
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id}`.execute(ctx.deps.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('requeues a failed row too', async () => {
    const id = await inboxRow(mine.workspace.appId, 'failed', { lastError: 'x', attempts: 2 });
    expect((await requeue(mine.headers, id)).json().data).toEqual({ id, status: 'failed' });
  });

  it("answers not_found (not 403) for another app's row, an unknown id and a malformed id", async () => {
    const foreign = await inboxRow(theirs.workspace.appId, 'dead_letter');
    for (const id of [foreign, randomUUID(), 'not-a-uuid']) {
      const res = await requeue(mine.headers, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    const row = await ctx.deps.db.selectFrom('webhook_inbox').select('status').where('id', '=', foreign).executeTakeFirstOrThrow();
    expect(row.status).toBe('dead_letter');
  });

  it('refuses rows that are not failed or dead_letter with 409', async () => {
    for (const status of ['processed', 'received'] as const) {
      const id = await inboxRow(mine.workspace.appId, status);
      const res = await requeue(mine.headers, id);
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('conflict');
    }
  });

  it('replays the first answer for a repeated idempotency-key without requeueing again', async () => {
    const id = await inboxRow(mine.workspace.appId, 'dead_letter');
    const key = { 'idempotency-key': `req-${randomUUID()}` };
    const first = await requeue(mine.headers, id, key);
    const second = await requeue(mine.headers, id, key);
    expect(second.statusCode).toBe(200);
    expect(second.json().data).toEqual(first.json().data);
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id}`.execute(ctx.deps.db);
    expect(rows[0]!.n).toBe(1);
    const other = await inboxRow(mine.workspace.appId, 'dead_letter');
    expect((await requeue(mine.headers, other, key)).statusCode).toBe(409);
  });

  it('answers two concurrent requeues with one idempotency-key with the one stored answer', async () => {
    const id = await inboxRow(mine.workspace.appId, 'dead_letter');
    const key = { 'idempotency-key': `race-${randomUUID()}` };
    // The second waits for the first to commit, then replays its answer (not a 409 for a row
    // the first one already moved to received).
    const [a, b] = await Promise.all([requeue(mine.headers, id, key), requeue(mine.headers, id, key)]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.json().data).toEqual({ id, status: 'dead_letter' });
    expect(b.json().data).toEqual(a.json().data);
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id}`.execute(ctx.deps.db);
    expect(rows[0]!.n).toBe(1);
  });
});

describe('GET /v1/operator/webhook-inbox', () => {
  it('lists every app, unresolved rows included, in offset pages with filters', async () => {
    const unresolved = await inboxRow(null, 'failed', { key: 'sms' });
    const all = (await ctx.app.inject({ method: 'GET', url: '/v1/operator/webhook-inbox?limit=500', headers: adminHeaders() })).json();
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox`.execute(ctx.deps.db);
    expect(all.meta).toMatchObject({ page: 1, limit: 200, total: rows[0]!.n, hasMore: rows[0]!.n > 200 });
    const filtered = (
      await ctx.app.inject({ method: 'GET', url: '/v1/operator/webhook-inbox?status=failed&integrationKey=sms', headers: adminHeaders() })
    ).json();
    expect(filtered.data.map((r: { id: string }) => r.id)).toEqual([unresolved]);
    expect(filtered.meta.total).toBe(1);
    expect(filtered.data[0]).toMatchObject({ appId: null, status: 'failed' });
    const byApp = (
      await ctx.app.inject({ method: 'GET', url: `/v1/operator/webhook-inbox?appId=${theirs.workspace.appId}`, headers: adminHeaders() })
    ).json();
    expect(byApp.data.every((r: { appId: string }) => r.appId === theirs.workspace.appId)).toBe(true);
    // empty filters are no filters, status included: every status of every app
    const empty = await ctx.app.inject({
      method: 'GET',
      url: '/v1/operator/webhook-inbox?status=&integrationKey=&appId=',
      headers: adminHeaders(),
    });
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json().meta.total).toBe(rows[0]!.n);
    expect(
      (await ctx.app.inject({ method: 'GET', url: '/v1/operator/webhook-inbox?status=bogus', headers: adminHeaders() })).statusCode,
    ).toBe(422);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/operator/webhook-inbox', headers: mine.headers })).statusCode).toBe(403);
  });
});
