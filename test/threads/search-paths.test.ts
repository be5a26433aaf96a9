import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/http/pagination.js';
import { SEARCH_TUNING, searchMessages } from '../../src/threads/search.queries.js';
import { indexUnindexed } from '../../src/threads/search-index.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread } from '../helpers/threads.js';

// The two ways a search page is found (src/threads/search.queries.ts): a bounded walk of
// the newest messages, and the GIN index when the walk finds too few. Both must give the same
// pages; the path is returned so that each is seen to run.
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
// A reader who sees every thread: what is tested here is the path, not who sees what.
const reader = { kind: 'operator' as const, workspaceId: ws };
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const thread = await seedThread(ctx.deps, line);

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n));
// Old messages with rare words, a private note among them; then, newer than all of them, more
// filler than a page of two (limit 1) walks, one in four carrying a common word.
const old = {
  first: await seedMessage(ctx.deps, thread, 'first rare kumquat', { createdAt: day(1) }),
  note: await seedMessage(ctx.deps, thread, 'private rare kumquat note', { kind: 'note', createdAt: day(2) }),
  activity: await seedMessage(ctx.deps, thread, 'kumquat assigned by the service', { kind: 'activity', createdAt: day(3) }),
  last: await seedMessage(ctx.deps, thread, 'last rare kumquat', { createdAt: day(4) }),
};
const filler = 3 * SEARCH_TUNING.walkRowsPerHit;
await sql`
  INSERT INTO messages (workspace_id, thread_id, connection_id, direction, external_id, text, status, created_at, updated_at)
  SELECT ${ws}, ${thread.id}, ${line.id}, 'inbound', 'filler-' || i,
         CASE WHEN i % 4 = 0 THEN 'common filler' ELSE 'filler' END, 'received',
         ${day(10)}::timestamptz + i * interval '1 second', now()
  FROM generate_series(1, ${filler}::int) AS i`.execute(ctx.deps.db);
// The path depends on the statistics' estimate of a search's matches over indexed messages, as
// the worker's indexer and autovacuum would have left them.
while ((await indexUnindexed(ctx.deps.db, 1000)) > 0);
await sql`ANALYZE messages`.execute(ctx.deps.db);
// A walk of 20 rows per row of the page: `common` (150 messages) is then walked, `kumquat` (4)
// looked up at once.
const short = { walkRowsPerHit: 20 };

const user = { includePrivate: true };
const all = async (q: string, options = user, tuning = SEARCH_TUNING) => {
  const ids: number[] = [];
  const paths = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await searchMessages(
      ctx.deps.db,
      reader,
      q,
      options,
      { limit: 1, cursor: cursor ? decodeCursor(cursor) : undefined },
      tuning,
    );
    ids.push(...page.items.map((m) => m.id));
    paths.add(page.path);
    cursor = page.meta.nextCursor;
  } while (cursor);
  return { ids, paths };
};

describe('searchMessages: the walk and the index path', () => {
  it('fills a page of a common word by walking the newest messages', async () => {
    const page = await searchMessages(ctx.deps.db, reader, 'common', user, { limit: 2, cursor: undefined }, short);
    expect(page.path).toBe('walk');
    expect(page.items.map((m) => m.external_id)).toEqual([`filler-${filler}`, `filler-${filler - 4}`]);
    expect(page.meta.nextCursor).toBeDefined();
  });

  it('looks a rare word up in the index at once, with the same rules', async () => {
    const page = await searchMessages(ctx.deps.db, reader, 'kumquat', user, { limit: 1, cursor: undefined }, short);
    expect(page.path).toBe('index');
    expect(page.items.map((m) => m.id)).toEqual([old.last.id]);
    expect(page.items[0]).toMatchObject({ text: 'last rare kumquat', thread_id: thread.id });
    expect(page.meta.nextCursor).toBe(encodeCursor(old.last.created_at, old.last.id));

    expect(await all('kumquat', user, short)).toEqual({ ids: [old.last.id, old.note.id, old.first.id], paths: new Set(['index']) });
    expect((await all('kumquat', { includePrivate: false })).ids).toEqual([old.last.id, old.first.id]);
    expect((await all('kumquat -last')).ids).toEqual([old.note.id, old.first.id]);
    expect((await all('nowhere')).ids).toEqual([]);
  });

  it('falls back from a walk that finds too few to the index, without losing or repeating a hit', async () => {
    // Page after page of `common` is walked; past the last of them the walk finds too few, and
    // `common or first` reaches back to the first message through the index.
    const { ids, paths } = await all('common or first', user, short);
    expect(ids).toHaveLength(filler / 4 + 1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.at(-1)).toBe(old.first.id);
    expect(paths).toEqual(new Set(['walk', 'fallback']));
  });

  it('finds only the workspace’s own messages on either path', async () => {
    const other = await makeTenant(ctx.deps);
    const otherLine = { ...(await makeConnection(ctx.deps, other.workspace.id)), workspaceId: other.workspace.id };
    const foreign = await seedMessage(ctx.deps, await seedThread(ctx.deps, otherLine), 'kumquat common elsewhere', { createdAt: day(20) });
    expect((await all('kumquat')).ids).not.toContain(foreign.id);
    expect(
      (
        await searchMessages(ctx.deps.db, { kind: 'operator', workspaceId: other.workspace.id }, 'kumquat', user, {
          limit: 1,
          cursor: undefined,
        })
      ).items.map((m) => m.id),
    ).toEqual([foreign.id]);
  });

  it('looks words up in the GIN index, which holds no entry for a message not indexed yet', async () => {
    // The index is partial (search_vector IS NOT NULL): a search's `@@` must still be planned
    // on it, or the fallback path would read every message of every workspace.
    await sql`SET enable_seqscan = off`.execute(ctx.deps.db);
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN SELECT id FROM messages WHERE search_vector @@ websearch_to_tsquery('simple', 'kumquat')`.execute(ctx.deps.db);
    await sql`RESET enable_seqscan`.execute(ctx.deps.db);
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('messages_text_search_idx');
    const { rows: defs } = await sql<{ def: string }>`
      SELECT pg_get_indexdef('messages_text_search_idx'::regclass) AS def`.execute(ctx.deps.db);
    expect(defs[0]!.def).toMatch(/WHERE \(search_vector IS NOT NULL\)$/);
  });
});
