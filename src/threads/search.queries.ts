import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../db/message-columns.js';
import { afterCursor, BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';
import { type ThreadReader, visibleThreadId } from './visibility.js';

/**
 * What PostgreSQL makes of a search: `nodes` 0 when it holds no word at all (only operators,
 * `""`, `or`), and `indexable` false when nothing in it can be looked up (only excluded words,
 * which would test every message of the workspace).
 */
export async function inspectSearch(db: Executor, q: string): Promise<{ nodes: number; indexable: boolean }> {
  const { rows } = await sql<{ nodes: number; tree: string }>`
    SELECT numnode(t) AS nodes, querytree(t) AS tree FROM websearch_to_tsquery('simple', ${q}) AS t`.execute(db);
  const row = rows[0]!;
  return { nodes: row.nodes, indexable: row.nodes > 0 && row.tree !== 'T' };
}

/**
 * `walkRowsPerHit`: how many of the workspace's newest messages (after the cursor) a search
 * tests one by one, per row of the page, before it asks the GIN index instead; and a search the
 * statistics say matches no more messages than that walk would test goes to the index at once.
 * The break-even frequency is 1 in this many: a walk tests a row in about 1 µs, the index path
 * reads a matching row in about 2 µs and reads them all (docs/performance.md, "Conversations").
 */
export interface SearchTuning {
  walkRowsPerHit: number;
}

export const SEARCH_TUNING: SearchTuning = { walkRowsPerHit: 200 };

/** How a page was found: walked, looked up in the index, or looked up after a walk found too few. */
export type SearchPath = 'walk' | 'index' | 'fallback';

/**
 * The messages of the reader's workspace matching `q` (websearch_to_tsquery syntax), newest
 * first, one cursor page, and which path found it. Activity lines are the service's own words
 * and never hits; private notes only where `includePrivate`; only messages of threads the
 * reader sees (./visibility.ts).
 *
 * The path is chosen here, not by the planner: left to itself it prices testing a row at
 * nothing and walks for a word no message has (every message of the workspace). So: a search
 * the statistics call rare goes to the GIN index, which gives every match, of which the newest
 * are kept; any other walks the newest messages in page order, at most `walkRowsPerHit` per row
 * of the page, which fills a page of a common word after a few rows; when the walk found too
 * few (the words are common elsewhere, rare here), the index after all.
 */
export async function searchMessages(
  db: Executor,
  reader: ThreadReader,
  q: string,
  options: { includePrivate: boolean },
  page: CursorRequest,
  tuning: SearchTuning = SEARCH_TUNING,
) {
  const walk = (page.limit + 1) * tuning.walkRowsPerHit;
  if ((await estimateMatches(db, q)) <= walk)
    return { ...(await searchByIndex(db, reader, q, options, page)), path: 'index' as SearchPath };

  const newest = afterCursor(
    db
      .selectFrom('messages')
      .select([...MESSAGE_COLUMNS, sql<string>`search_vector`.as('search_vector')])
      .where('workspace_id', '=', reader.workspaceId),
    BY_CREATED,
    page.cursor,
  )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(walk);
  // A subquery with a LIMIT is not flattened: the match is tested above the bounded walk.
  const walked = await keysetPage(
    db
      .selectFrom(newest.as('m'))
      .select(MESSAGE_COLUMNS.map((c) => `m.${c}` as const))
      // A message not indexed yet (stored moments ago) is tested on its text: same words, same answer.
      .where(sql<boolean>`coalesce(m.search_vector, to_tsvector('simple', m.text)) @@ websearch_to_tsquery('simple', ${q})`)
      .where('m.kind', '<>', 'activity')
      .$if(!options.includePrivate, (w) => w.where('m.private', '=', false))
      .where(visibleThreadId(reader, sql.ref('m.thread_id'))),
    BY_CREATED,
    page,
  );
  if (walked.meta.nextCursor !== undefined) return { ...walked, path: 'walk' as SearchPath };

  return { ...(await searchByIndex(db, reader, q, options, page)), path: 'fallback' as SearchPath };
}

/**
 * How many messages of every workspace the planner's statistics say `q` matches. The index path
 * reads each of them (it filters the workspace afterwards), so this is its cost, known before
 * running it: a plan's estimate, no row read.
 */
async function estimateMatches(db: Executor, q: string): Promise<number> {
  const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>`
    EXPLAIN (FORMAT JSON) SELECT 1 FROM messages WHERE search_vector @@ websearch_to_tsquery('simple', ${q})`.execute(db);
  return rows[0]!['QUERY PLAN'][0].Plan['Plan Rows'];
}

/**
 * One page through messages_text_search_idx: every match, of which the newest are kept. The
 * messages not indexed yet (the indexer fills their vector after the batch that stored them)
 * are the rest of the answer: found through messages_unindexed_idx, which holds only those,
 * and tested on their text. A message is in exactly one of the two, so nothing is counted twice.
 */
async function searchByIndex(db: Executor, reader: ThreadReader, q: string, options: { includePrivate: boolean }, page: CursorRequest) {
  const matching = (match: ReturnType<typeof sql<boolean>>) =>
    afterCursor(
      db
        .selectFrom('messages')
        .select(['id', 'created_at'])
        .where('workspace_id', '=', reader.workspaceId)
        .where(match)
        .where('kind', '<>', 'activity')
        .$if(!options.includePrivate, (w) => w.where('private', '=', false))
        .where(visibleThreadId(reader, sql.ref('messages.thread_id'))),
      BY_CREATED,
      page.cursor,
    );
  // MATERIALIZED: planned alone, without the page's ORDER BY and LIMIT that would send the
  // planner back to the walk, so the match is looked up in the GIN index.
  const hits = await keysetPage(
    db
      .with(
        (cte) => cte('hits').materialized(),
        () =>
          matching(sql<boolean>`search_vector @@ websearch_to_tsquery('simple', ${q})`).unionAll(
            matching(sql<boolean>`search_vector IS NULL AND to_tsvector('simple', text) @@ websearch_to_tsquery('simple', ${q})`),
          ),
      )
      .selectFrom('hits')
      .select(['id', 'created_at']),
    BY_CREATED,
    page,
  );
  const ids = hits.items.map((h) => h.id);
  const rows = ids.length === 0 ? [] : await db.selectFrom('messages').select(MESSAGE_COLUMNS).where('id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { items: ids.map((id) => byId.get(id)!), meta: hits.meta };
}

/** Words of a text as a search that matches any of them (websearch_to_tsquery syntax), at most `max`. */
export function anyWordQuery(text: string, max = 24): string | undefined {
  const words = [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? [])].slice(0, max);
  return words.length > 0 ? words.join(' or ') : undefined;
}

/**
 * The agent replies of the resolved threads of the reader's workspace closest to `q` (by the
 * full-text search's index and ts_rank over their contacts' and agents' messages), other than
 * `exceptThreadId`: up to `threads` threads, the newest `perThread` replies of each.
 */
export async function repliesOfSimilarResolvedThreads(
  db: Executor,
  reader: ThreadReader,
  q: string,
  exceptThreadId: number,
  options: { threads: number; perThread: number },
) {
  const { rows } = await sql<{ id: number; thread_id: number; text: string }>`
    WITH q AS (SELECT websearch_to_tsquery('simple', ${q}) AS q),
    close AS (
      SELECT m.thread_id, max(ts_rank(coalesce(m.search_vector, to_tsvector('simple', m.text)), q.q)) AS rank
      FROM messages m CROSS JOIN q JOIN threads t ON t.id = m.thread_id
      WHERE m.workspace_id = ${reader.workspaceId}
        AND (m.search_vector @@ q.q OR (m.search_vector IS NULL AND to_tsvector('simple', m.text) @@ q.q))
        AND m.kind = 'message' AND m.thread_id <> ${exceptThreadId}
        AND t.status = 'resolved' AND ${visibleThreadId(reader, sql.ref('m.thread_id'))}
      GROUP BY m.thread_id
      ORDER BY rank DESC, m.thread_id DESC
      LIMIT ${options.threads}
    ),
    replies AS (
      SELECT m.id, m.thread_id, m.text, close.rank,
             row_number() OVER (PARTITION BY m.thread_id ORDER BY m.created_at DESC, m.id DESC) AS n
      FROM messages m JOIN close ON close.thread_id = m.thread_id
      WHERE m.direction = 'outbound' AND m.kind = 'message' AND m.text <> ''
    )
    SELECT id, thread_id, text FROM replies WHERE n <= ${options.perThread} ORDER BY rank DESC, thread_id DESC, id`.execute(db);
  return rows;
}
