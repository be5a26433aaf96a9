import { sql } from 'kysely';
import { arrayLiteral } from '../db/array-literal.js';
import type { Executor } from '../db/database.js';

/** SQL of recording conversations (docs/reports.md): opened, first answered, resolved. */

export interface ConversationOpening {
  workspaceId: number;
  threadId: number;
  connectionId: number;
  /** Opened again after a resolution (not the thread's first conversation). */
  reopened: boolean;
}

/**
 * Opens a conversation for each thread, one statement however many; a thread that has an open
 * one keeps it (its opening stands).
 */
export async function insertConversations(db: Executor, openings: ConversationOpening[], at: Date) {
  if (openings.length === 0) return;
  await sql`
    INSERT INTO conversations (workspace_id, thread_id, connection_id, reopened, opened_at)
    SELECT w, th, cn, r, ${at}::timestamptz
    FROM unnest(${arrayLiteral(openings.map((o) => o.workspaceId))}::int[], ${arrayLiteral(openings.map((o) => o.threadId))}::bigint[],
                ${arrayLiteral(openings.map((o) => o.connectionId))}::bigint[], ${arrayLiteral(openings.map((o) => o.reopened))}::boolean[]) AS v(w, th, cn, r)
    ORDER BY th
    ON CONFLICT (thread_id) WHERE resolved_at IS NULL DO NOTHING`.execute(db);
}

/** The open conversation of a thread, if any. */
export async function findOpenConversation(db: Executor, threadId: number) {
  return db
    .selectFrom('conversations')
    .select(['id', 'opened_at', 'first_response_at'])
    .where('thread_id', '=', threadId)
    .where('resolved_at', 'is', null)
    .executeTakeFirst();
}

/** Records a conversation's first answer, unless it has one. */
export async function setFirstResponse(db: Executor, id: number, at: Date, seconds: number, businessSeconds: number) {
  await db
    .updateTable('conversations')
    .set({ first_response_at: at, first_response_seconds: seconds, first_response_business_seconds: businessSeconds })
    .where('id', '=', id)
    .where('first_response_at', 'is', null)
    .execute();
}

export interface Resolution {
  id: number;
  threadId: number;
  at: Date;
  seconds: number;
  businessSeconds: number;
  assigneeId: number | null;
  teamId: number | null;
  labels: string[];
  priority: string;
  slaBreaches: number;
}

/**
 * Closes a conversation with what the thread was at its resolution, and moves the thread's
 * message counts onto it (the thread starts counting the next one from zero): one statement.
 */
export async function resolveConversation(db: Executor, r: Resolution) {
  await sql`
    WITH t AS (
      UPDATE threads SET conversation_messages_in = 0, conversation_messages_out = 0
      FROM (SELECT id, conversation_messages_in AS n_in, conversation_messages_out AS n_out FROM threads WHERE id = ${r.threadId}) old
      WHERE threads.id = old.id
      RETURNING old.n_in, old.n_out
    )
    UPDATE conversations c SET
      resolved_at = ${r.at}, resolution_seconds = ${r.seconds}, resolution_business_seconds = ${r.businessSeconds},
      assignee_id = ${r.assigneeId}, team_id = ${r.teamId}, labels = ${r.labels}::text[], priority = ${r.priority},
      sla_breaches = ${r.slaBreaches}, messages_in = t.n_in, messages_out = t.n_out
    FROM t
    WHERE c.id = ${r.id}`.execute(db);
}
