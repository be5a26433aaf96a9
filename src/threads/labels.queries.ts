import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { restrictsReader, type ThreadReader, visibleThreads } from './visibility.js';

/**
 * Every label on the workspace's threads, by name, with how many open threads carry it. Read
 * from thread_labels (kept by a trigger on threads, migrations/0019_thread_labels.ts): the
 * distinct names by a skip scan of its primary key (one probe per name, however many threads
 * carry it), then each name's open threads counted in the partial index of open rows, without
 * reading a thread. docs/performance.md, "Conversations", has the figures.
 *
 * Only the threads the reader sees are counted (./visibility.ts). For a reader the rule
 * restricts, their open threads' labels are counted in one pass over those threads (`visible`,
 * read only then: a CTE no branch reads is never run; about twice as fast as joining the label
 * rows to the threads); for any other reader the counts stay index-only.
 */
export async function listLabels(db: Executor, reader: ThreadReader) {
  const { workspaceId } = reader;
  const { rows } = await sql<{ name: string; open_threads: number }>`
    WITH RECURSIVE names(name) AS (
      (SELECT name FROM thread_labels WHERE workspace_id = ${workspaceId} ORDER BY name LIMIT 1)
      UNION ALL
      SELECT (SELECT l.name FROM thread_labels l WHERE l.workspace_id = ${workspaceId} AND l.name > n.name ORDER BY l.name LIMIT 1)
      FROM names n WHERE n.name IS NOT NULL
    ),
    visible(name, open_threads) AS MATERIALIZED (
      SELECT l.name, count(DISTINCT threads.id) FROM threads CROSS JOIN LATERAL unnest(threads.labels) AS l(name)
      WHERE threads.workspace_id = ${workspaceId} AND threads.status = 'open' AND ${visibleThreads(reader)}
      GROUP BY l.name
    )
    SELECT n.name,
           (CASE WHEN ${restrictsReader(reader)}
                 THEN coalesce((SELECT v.open_threads FROM visible v WHERE v.name = n.name), 0)
                 ELSE (SELECT count(*) FROM thread_labels o WHERE o.workspace_id = ${workspaceId} AND o.name = n.name AND o.open)
            END)::int AS open_threads
    FROM names n
    WHERE n.name IS NOT NULL
    ORDER BY n.name`.execute(db);
  return rows;
}
