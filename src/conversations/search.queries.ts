import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';

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
 * A workspace's messages matching `q` (websearch_to_tsquery syntax), newest first, one cursor
 * page. The match is written exactly as messages_text_search_idx's expression (our
 * message_search_vector, to_tsvector('simple', text)) so the index serves it. Activity lines
 * are the service's own words and never hits; private notes only where `includePrivate`.
 */
export async function searchMessages(
  db: Executor,
  workspaceId: number,
  q: string,
  options: { includePrivate: boolean },
  page: CursorRequest,
) {
  const query = db
    .selectFrom('messages')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`message_search_vector(text) @@ websearch_to_tsquery('simple', ${q})`)
    .where('kind', '<>', 'activity')
    .$if(!options.includePrivate, (qb) => qb.where('private', '=', false));
  return keysetPage(query, BY_CREATED, page);
}
