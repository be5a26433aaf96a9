import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as threadLabelsMigration from '../../migrations/0019_thread_labels.js';
import { listLabels } from '../../src/threads/labels.queries.js';
import { RARE_LABEL_THREADS } from '../../src/threads/threads.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread } from '../helpers/threads.js';
import { inbound } from './workflow-helpers.js';

// GET /v1/labels and the `label=` filter read thread_labels, which a trigger on threads keeps
// in step with every change of a thread's labels or status (migrations/0019_thread_labels.ts).
// Each test changes threads the way the service does and checks the counts against the
// threads themselves.

const ctx = await useTestContext();
const db = ctx.deps.db;

async function tenantWithLine() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  return { ...tenant, ws: tenant.workspace.id, connection, line: { ...connection, workspaceId: tenant.workspace.id } };
}

async function labels(headers: Record<string, string>) {
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/labels', headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { name: string; openThreads: number }[];
}

/** The labels as counted from the threads themselves: what thread_labels must agree with. */
async function countedFromThreads(workspaceId: number) {
  const { rows } = await sql<{ name: string; openThreads: number }>`
    SELECT l.name, count(*) FILTER (WHERE t.status = 'open')::int AS "openThreads"
    FROM threads t CROSS JOIN LATERAL unnest(t.labels) AS l(name)
    WHERE t.workspace_id = ${workspaceId}
    GROUP BY l.name ORDER BY l.name`.execute(db);
  return rows;
}

const patch = (headers: Record<string, string>, id: number, payload: object) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${id}`, headers, payload });

async function patchOk(headers: Record<string, string>, id: number, payload: object) {
  const res = await patch(headers, id, payload);
  expect(res.statusCode, res.body).toBe(200);
}

const merge = (headers: Record<string, string>, intoId: number, otherId: number) =>
  ctx.app.inject({ method: 'POST', url: `/v1/contacts/${intoId}/merge`, headers, payload: { contactId: otherId } });

async function filtered(headers: Record<string, string>, query: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads?${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: { id: number }[]; meta: { nextCursor?: string | null } };
}

describe('label counts follow the threads', () => {
  it('follows PATCH: labels added and removed, status to and from open', async () => {
    const t = await tenantWithLine();
    const other = await tenantWithLine();
    const a = await seedThread(ctx.deps, t.line, { status: 'open' });
    const b = await seedThread(ctx.deps, t.line, { status: 'open', labels: ['vip'] });
    const theirs = await seedThread(ctx.deps, other.line, { status: 'open', labels: ['vip'] });

    await patchOk(t.headers, a.id, { labels: ['VIP', 'billing'] });
    expect(await labels(t.headers)).toEqual([
      { name: 'billing', openThreads: 1 },
      { name: 'vip', openThreads: 2 },
    ]);

    await patchOk(t.headers, b.id, { status: 'pending' });
    expect(await labels(t.headers)).toEqual([
      { name: 'billing', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);

    // Removing a label and resolving in one change; a label on no thread any more is gone.
    await patchOk(t.headers, a.id, { labels: ['vip'], status: 'resolved' });
    expect(await labels(t.headers)).toEqual([{ name: 'vip', openThreads: 0 }]);

    await patchOk(t.headers, b.id, { status: 'open', labels: ['vip', 'returns:eu'] });
    await patchOk(t.headers, a.id, { labels: [] });
    expect(await labels(t.headers)).toEqual([
      { name: 'returns:eu', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
    expect(await labels(t.headers)).toEqual(await countedFromThreads(t.ws));

    // The other workspace's thread with the same label counted only there, and its changes
    // never reach this workspace.
    await patchOk(other.headers, theirs.id, { labels: ['vip', 'secret'] });
    expect(await labels(other.headers)).toEqual([
      { name: 'secret', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
    expect(await labels(t.headers)).toEqual([
      { name: 'returns:eu', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
  });

  it('counts a thread open again when an inbound message reopens it', async () => {
    const t = await tenantWithLine();
    const id = await inbound(ctx, t.connection, 'reopen-contact', 'wamid.reopen-1');
    await patchOk(t.headers, id, { labels: ['billing'], status: 'resolved' });
    expect(await labels(t.headers)).toEqual([{ name: 'billing', openThreads: 0 }]);

    await inbound(ctx, t.connection, 'reopen-contact', 'wamid.reopen-2');
    expect((await db.selectFrom('threads').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('open');
    expect(await labels(t.headers)).toEqual([{ name: 'billing', openThreads: 1 }]);
    expect((await filtered(t.headers, 'label=billing&status=open')).data.map((r) => r.id)).toEqual([id]);
  });

  it('moves the labels of a thread a contact merge folds to the thread it folds into', async () => {
    const t = await tenantWithLine();
    const kept = await seedThread(ctx.deps, t.line, { status: 'open', labels: ['vip'] });
    const folded = await seedThread(ctx.deps, t.line, { status: 'open', labels: ['duplicate', 'vip'] });
    expect(await labels(t.headers)).toEqual([
      { name: 'duplicate', openThreads: 1 },
      { name: 'vip', openThreads: 2 },
    ]);

    const res = await merge(t.headers, kept.contact_id, folded.contact_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(await db.selectFrom('threads').select('id').where('id', '=', folded.id).executeTakeFirst()).toBeUndefined();
    const after = await db.selectFrom('threads').select('labels').where('id', '=', kept.id).executeTakeFirstOrThrow();
    expect(after.labels).toEqual(['vip', 'duplicate']);
    expect(await labels(t.headers)).toEqual([
      { name: 'duplicate', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
    expect((await filtered(t.headers, 'label=duplicate')).data.map((r) => r.id)).toEqual([kept.id]);
    const left = await sql<{ n: number }>`SELECT count(*)::int AS n FROM thread_labels WHERE thread_id = ${folded.id}`.execute(db);
    expect(left.rows[0]!.n).toBe(0);
  });

  it('keeps at most the label limit on a merged thread, the kept thread’s own first', async () => {
    const t = await tenantWithLine();
    const own = Array.from({ length: 15 }, (_, i) => `own-${i}`);
    const theirs = Array.from({ length: 10 }, (_, i) => `theirs-${i}`);
    const kept = await seedThread(ctx.deps, t.line, { status: 'open', labels: own });
    const folded = await seedThread(ctx.deps, t.line, { status: 'open', labels: theirs });
    expect((await merge(t.headers, kept.contact_id, folded.contact_id)).statusCode).toBe(200);
    const after = await db.selectFrom('threads').select('labels').where('id', '=', kept.id).executeTakeFirstOrThrow();
    expect(after.labels).toEqual([...own, ...theirs.slice(0, 5)]);
    expect(await labels(t.headers)).toEqual(await countedFromThreads(t.ws));
  });

  it('starts the SLA clock of a policy the labels a merge brings match', async () => {
    const t = await tenantWithLine();
    const policy = await ctx.app.inject({
      method: 'POST',
      url: '/v1/sla-policies',
      headers: t.headers,
      payload: { name: 'VIP', resolution: 'PT4H', conditions: { labels: ['vip'] } },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const kept = await inbound(ctx, t.connection, 'merge-kept', 'wamid.merge-kept');
    const folded = await inbound(ctx, t.connection, 'merge-folded', 'wamid.merge-folded');
    await patchOk(t.headers, folded, { labels: ['vip'] });
    const thread = async (id: number) =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}`, headers: t.headers })).json().data;
    expect((await thread(kept)).sla).toBeNull();

    const ids = await db.selectFrom('threads').select(['id', 'contact_id']).where('id', 'in', [kept, folded]).execute();
    const contactOf = (id: number) => ids.find((r) => r.id === id)!.contact_id;
    expect((await merge(t.headers, contactOf(kept), contactOf(folded))).statusCode).toBe(200);
    const merged = await thread(kept);
    expect(merged.labels).toEqual(['vip']);
    expect(merged.sla).toMatchObject({ policyId: policy.json().data.id, status: 'ok' });
    expect(merged.sla.resolutionDueAt).not.toBeNull();
  });

  it('stays equal to the threads under concurrent changes to the same and different threads', async () => {
    const t = await tenantWithLine();
    const threads: { id: number }[] = [];
    for (let i = 0; i < 4; i++) threads.push(await seedThread(ctx.deps, t.line, { status: 'open', labels: ['a'] }));
    const names = ['a', 'b', 'c', 'd'];
    const statuses = ['open', 'pending', 'resolved'];
    // Forty changes at once, ten per thread, each a different mix of labels and status.
    const changes = Array.from({ length: 40 }, (_, i) => {
      const thread = threads[i % threads.length]!;
      const chosen = names.filter((_, k) => (i * 7 + k * 3) % 5 < 3);
      return patch(t.headers, thread.id, { labels: chosen, status: statuses[i % 3] });
    });
    for (const res of await Promise.all(changes)) expect(res.statusCode, res.body).toBe(200);
    const expected = await countedFromThreads(t.ws);
    expect(expected.length).toBeGreaterThan(0);
    expect(await labels(t.headers)).toEqual(expected);
  });
});

describe('the label filter', () => {
  it('finds a rare label’s threads, newest first, and never another workspace’s', async () => {
    const t = await tenantWithLine();
    const other = await tenantWithLine();
    let clock = Date.UTC(2026, 2, 1);
    const at = () => {
      clock += 1000;
      return new Date(clock);
    };
    const older = await seedThread(ctx.deps, t.line, { labels: ['rare'], lastMessageAt: at() });
    await seedThread(ctx.deps, t.line, { labels: ['common'], lastMessageAt: at() });
    const newer = await seedThread(ctx.deps, t.line, { status: 'pending', labels: ['common', 'rare'], lastMessageAt: at() });
    await seedThread(ctx.deps, other.line, { labels: ['rare'], lastMessageAt: at() });

    expect((await filtered(t.headers, 'label=rare')).data.map((r) => r.id)).toEqual([newer.id, older.id]);
    expect((await filtered(t.headers, 'label=rare&status=open')).data.map((r) => r.id)).toEqual([older.id]);
    expect((await filtered(t.headers, 'label=absent')).data).toEqual([]);

    await patchOk(t.headers, older.id, { labels: [] });
    expect((await filtered(t.headers, 'label=rare')).data.map((r) => r.id)).toEqual([newer.id]);
  });

  it('reads the same pages whether the label is rare or common in the workspace', async () => {
    const t = await tenantWithLine();
    // One thread more than a rare label may have, each a second apart, every third open.
    await sql`
      WITH c AS (
        INSERT INTO contacts (workspace_id, name)
        SELECT ${t.ws}, 'Bulk ' || i FROM generate_series(1, ${RARE_LABEL_THREADS + 1}::int) AS i
        RETURNING id
      )
      INSERT INTO threads (workspace_id, connection_id, contact_id, status, labels, last_message_at)
      SELECT ${t.ws}, ${t.connection.id}, c.id, CASE WHEN c.id % 3 = 0 THEN 'open' ELSE 'resolved' END,
             ARRAY['bulk'], timestamptz '2026-01-01' + c.id * interval '1 second'
      FROM c`.execute(db);
    const pages = async (query: string) => {
      const ids: number[] = [];
      let cursor: string | null | undefined;
      do {
        const page = await filtered(t.headers, `${query}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        ids.push(...page.data.map((r) => r.id));
        cursor = page.meta.nextCursor;
      } while (cursor);
      return ids;
    };
    const expected = async (status?: string) =>
      (
        await db
          .selectFrom('threads')
          .select('id')
          .where('workspace_id', '=', t.ws)
          .where(sql<boolean>`labels @> ARRAY['bulk']`)
          .$if(status !== undefined, (q) => q.where('status', '=', status as 'open'))
          .orderBy('last_message_at', 'desc')
          .orderBy('id', 'desc')
          .execute()
      ).map((r) => r.id);

    // Common: found by walking the list.
    expect(await pages('label=bulk')).toEqual(await expected());
    expect(await pages('label=bulk&status=open')).toEqual(await expected('open'));

    // One thread fewer makes it rare: found by id, the same pages.
    const first = (await expected())[0]!;
    await patchOk(t.headers, first, { labels: [] });
    const rows = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM thread_labels WHERE workspace_id = ${t.ws} AND name = 'bulk'`.execute(db);
    expect(rows.rows[0]!.n).toBe(RARE_LABEL_THREADS);
    expect(await pages('label=bulk')).toEqual(await expected());
    expect(await pages('label=bulk&status=open')).toEqual(await expected('open'));
    expect(await listLabels(db, { kind: 'operator', workspaceId: t.ws })).toEqual([
      { name: 'bulk', open_threads: (await expected('open')).filter((id) => id !== first).length },
    ]);
  });
});

// Last: it takes the table down and up again in this file's own database.
describe('migration 0019', () => {
  it('fills thread_labels from the threads that exist when it runs', async () => {
    const t = await tenantWithLine();
    await threadLabelsMigration.down(db as unknown as Kysely<unknown>);
    await seedThread(ctx.deps, t.line, { status: 'open', labels: ['before', 'vip'] });
    await seedThread(ctx.deps, t.line, { status: 'snoozed', labels: ['vip'] });
    await threadLabelsMigration.up(db as unknown as Kysely<unknown>);
    expect(await labels(t.headers)).toEqual([
      { name: 'before', openThreads: 1 },
      { name: 'vip', openThreads: 1 },
    ]);
  });
});
