import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** Every label on the workspace's threads, by name, with how many open threads carry it. */
export async function listLabels(db: Executor, workspaceId: number) {
  const { rows } = await sql<{ name: string; open_threads: number }>`
    SELECT l.name, count(*) FILTER (WHERE t.status = 'open')::int AS open_threads
    FROM threads t CROSS JOIN LATERAL unnest(t.labels) AS l(name)
    WHERE t.workspace_id = ${workspaceId} AND t.labels <> '{}'
    GROUP BY l.name
    ORDER BY l.name`.execute(db);
  return rows;
}
