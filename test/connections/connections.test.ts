import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MALFORMED_CURSOR_MESSAGE } from '../../src/http/errors.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();

/** A workspace with `n` connections whose created_at values collide in groups, to test the id tie-break. */
async function tenantWithConnections(n: number) {
  const tenant = await makeTenant(ctx.deps);
  for (let i = 0; i < n; i++)
    await makeConnection(ctx.deps, tenant.workspace.id, { externalAccountId: `acct-${tenant.workspace.id}-${i}` });
  await sql`UPDATE connections SET created_at = '2026-01-01T00:00:00.000Z'::timestamptz + (id % 7) * interval '1 second'
            WHERE workspace_id = ${tenant.workspace.id}`.execute(ctx.deps.db);
  return tenant;
}

async function list(headers: Record<string, string>, query = '') {
  return ctx.app.inject({ method: 'GET', url: `/v1/connections${query}`, headers });
}

describe('GET /v1/connections cursor pages (docs/api.md, "Pagination")', () => {
  it('defaults to 25 and clamps above 100 to 100 without an error', async () => {
    const tenant = await tenantWithConnections(110);
    for (const [query, size] of [
      ['', 25],
      ['?limit=abc', 25],
      ['?limit=0', 25],
      ['?limit=101', 100],
      ['?limit=1000', 100],
      ['?limit=7', 7],
    ] as const) {
      const res = await list(tenant.headers, query);
      expect(res.statusCode, query).toBe(200);
      expect(res.json().data, query).toHaveLength(size);
      expect(res.json().meta.nextCursor, query).toEqual(expect.any(String));
    }
  });

  it('walks every row exactly once, newest first, and ends with nextCursor absent', async () => {
    const tenant = await tenantWithConnections(23);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await list(tenant.headers, `?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      const body = res.json();
      seen.push(...body.data.map((c: { id: number }) => c.id));
      cursor = body.meta.nextCursor;
      expect(body.meta).not.toHaveProperty('hasMore');
      pages++;
    } while (cursor);
    expect(pages).toBe(5);
    expect(new Set(seen).size).toBe(23);
    const rows = await ctx.deps.db
      .selectFrom('connections')
      .select(['id'])
      .where('workspace_id', '=', tenant.workspace.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('has no nextCursor when the page holds the last row exactly', async () => {
    const tenant = await tenantWithConnections(4);
    const body = (await list(tenant.headers, '?limit=4')).json();
    expect(body.data).toHaveLength(4);
    expect(body.meta).toEqual({ requestId: expect.any(String) });
  });

  it('answers a malformed cursor with 422 validation_failed', async () => {
    const tenant = await makeTenant(ctx.deps);
    for (const cursor of ['%%%', Buffer.from('yesterday:1').toString('base64url'), 'MTIz']) {
      const res = await list(tenant.headers, `?cursor=${cursor}`);
      expect(res.statusCode, cursor).toBe(422);
      expect(res.json().error).toEqual({ code: 'validation_failed', message: MALFORMED_CURSOR_MESSAGE });
    }
  });

  it("lists only the caller's own connections", async () => {
    const a = await tenantWithConnections(2);
    const b = await tenantWithConnections(3);
    const ids = (await list(a.headers)).json().data.map((c: { externalAccountId: string }) => c.externalAccountId);
    expect(ids).toHaveLength(2);
    expect(ids.every((id: string) => id.startsWith(`acct-${a.workspace.id}-`))).toBe(true);
    expect((await list(b.headers)).json().data).toHaveLength(3);
  });
});

describe('GET /v1/connections/:id', () => {
  it('answers one of the workspace’s connections as the list shows it; another’s, a deleted one or none is 404', async () => {
    const a = await tenantWithConnections(2);
    const b = await tenantWithConnections(1);
    const listed = (await list(a.headers)).json().data as { id: number }[];
    const get = (id: number | string, headers = a.headers) => ctx.app.inject({ method: 'GET', url: `/v1/connections/${id}`, headers });
    for (const c of listed) {
      const res = await get(c.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual(c);
    }
    const theirs = (await list(b.headers)).json().data[0].id as number;
    for (const id of [theirs, 999_999]) {
      const res = await get(id);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await get('x')).statusCode).toBe(422);
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${listed[0]!.id}`, headers: a.headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await get(listed[0]!.id)).statusCode).toBe(404);
  });
});
