import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import type { RetentionLimits } from './inbox-retention.js';

/**
 * 50 threads per DELETE (each takes its messages, attachments, notifications and visitors
 * with it through foreign keys, so a batch stays small even where threads are long), 40
 * batches per run; what is left waits for the next run, ten minutes later.
 */
export const CONVERSATION_LIMITS: RetentionLimits = { batchSize: 50, maxBatches: 40 };

/**
 * Deletes the threads of workspaces that set `conversationRetentionDays` once they are
 * resolved and silent for longer: no message and no change (a label, a note, reopening) for
 * that many days. Their messages and notes go with them and, after each batch commits, their
 * files' bytes; bytes whose removal fails are logged and left, as no row names them any more.
 * The contacts stay. Each batch is its own statement (pass the pool); rows being worked on
 * are skipped.
 */
export async function pruneOldConversations(
  deps: Pick<Deps, 'db' | 'storage' | 'log'>,
  now: Date,
  limits: RetentionLimits = CONVERSATION_LIMITS,
) {
  let deleted = 0;
  for (let batch = 0; batch < limits.maxBatches; batch++) {
    const { rows } = await sql<{ threads: number; keys: string[] | null }>`
      WITH doomed AS (
        SELECT t.id FROM threads t
        JOIN workspaces w ON w.id = t.workspace_id
        WHERE jsonb_typeof(w.settings -> 'conversationRetentionDays') = 'number'
          AND t.status = 'resolved'
          AND t.last_message_at < ${now}::timestamptz - make_interval(days => (w.settings ->> 'conversationRetentionDays')::int)
          AND t.updated_at < ${now}::timestamptz - make_interval(days => (w.settings ->> 'conversationRetentionDays')::int)
        ORDER BY t.id
        LIMIT ${limits.batchSize}
        FOR UPDATE OF t SKIP LOCKED
      ), files AS (
        SELECT a.storage_key FROM attachments a JOIN messages m ON m.id = a.message_id
        WHERE m.thread_id IN (SELECT id FROM doomed) AND a.storage_key IS NOT NULL
      ), gone AS (
        DELETE FROM threads WHERE id IN (SELECT id FROM doomed) RETURNING id
      )
      SELECT (SELECT count(*)::int FROM gone) AS threads, (SELECT array_agg(storage_key) FROM files) AS keys`.execute(deps.db);
    const { threads, keys } = rows[0]!;
    for (const key of keys ?? [])
      await deps.storage.delete(key).catch((err) => deps.log.warn({ err }, 'could not remove the bytes of a deleted conversation'));
    deleted += threads;
    if (threads < limits.batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
