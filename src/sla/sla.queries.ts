import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { BusinessHoursValue, SlaStatus } from '../db/types.js';
import { findOpenConversation } from '../reports/conversations.queries.js';

/** SQL of threads' SLA clocks (docs/sla.md): the state, its nearest due time and its status. */

export interface SlaColumns {
  sla: unknown;
  sla_due_at: Date | null;
  sla_status: SlaStatus | null;
}

/** Writes the SLA columns of threads, one statement however many. */
export async function writeSla(db: Executor, rows: (SlaColumns & { id: number })[]) {
  if (rows.length === 0) return;
  await sql`
    UPDATE threads t SET sla = v.sla, sla_due_at = v.due, sla_status = v.status
    FROM unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => (r.sla === null ? null : JSON.stringify(r.sla)))}::jsonb[],
                ${rows.map((r) => r.sla_due_at)}::timestamptz[], ${rows.map((r) => r.sla_status)}::text[]) AS v(id, sla, due, status)
    WHERE t.id = v.id`.execute(db);
}

/** The business hours of these teams that have their own. */
export async function teamHours(db: Executor, teamIds: number[]): Promise<Map<number, BusinessHoursValue>> {
  if (teamIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('teams')
    .select(['id', 'business_hours'])
    .where('id', 'in', teamIds)
    .where('business_hours', 'is not', null)
    .execute();
  return new Map(rows.map((r) => [r.id, r.business_hours!]));
}

/**
 * Where the thread's current opening began, its first reply of a user or API key since (not
 * an automated one: a rule's, an away reply, a survey), and the contact's first message after
 * the last such reply (`waitingSince`: what a next response answers), or undefined without an
 * open conversation: what a policy that first applies later in the opening starts its clocks from.
 */
export async function currentOpening(db: Executor, threadId: number) {
  const open = await findOpenConversation(db, threadId);
  if (!open) return undefined;
  const { rows } = await sql<{ first_reply_at: Date | null; waiting_since: Date | null }>`
    WITH replies AS (
      SELECT min(created_at) AS first_at, max(created_at) AS last_at FROM messages
      WHERE thread_id = ${threadId} AND direction = 'outbound' AND kind = 'message' AND NOT automation
        AND created_at >= ${open.opened_at})
    SELECT r.first_at AS first_reply_at,
      (SELECT min(m.created_at) FROM messages m
       WHERE m.thread_id = ${threadId} AND m.direction = 'inbound' AND m.kind = 'message' AND m.created_at > r.last_at) AS waiting_since
    FROM replies r`.execute(db);
  return { openedAt: open.opened_at, firstReplyAt: rows[0]?.first_reply_at ?? null, waitingSince: rows[0]?.waiting_since ?? null };
}

/** A thread's SLA and what its policy and hours read, locked until the transaction ends. */
export async function lockSlaThread(db: Executor, id: number) {
  return db
    .selectFrom('threads')
    .select(['id', 'workspace_id', 'connection_id', 'team_id', 'assignee_id', 'priority', 'labels', 'status', 'sla'])
    .select(
      sql<boolean>`EXISTS (SELECT 1 FROM connections c WHERE c.id = threads.connection_id AND c.deleted_at IS NOT NULL)`.as(
        'connection_deleted',
      ),
    )
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Members of a team: whom an unassigned thread's SLA warnings tell. */
export async function teamMemberIds(db: Executor, teamId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('team_members')
    .innerJoin('users', 'users.id', 'team_members.user_id')
    .select('team_members.user_id')
    .where('team_members.team_id', '=', teamId)
    .where('users.active', '=', true)
    .orderBy('team_members.user_id')
    .execute();
  return rows.map((r) => r.user_id);
}

/** Remembers that the away message answered these threads at `at`. */
export async function markAwayReplied(db: Executor, ids: number[], at: Date) {
  if (ids.length === 0) return;
  await db.updateTable('threads').set({ away_replied_at: at }).where('id', 'in', ids).execute();
}

/**
 * Of `threadIds`, those that held a message before `newMessageIds` came: a thread whose first
 * message is one of these (a live chat conversation, started empty) is opened by it.
 */
export async function threadsWithEarlierMessages(db: Executor, threadIds: number[], newMessageIds: number[]): Promise<Set<number>> {
  if (threadIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('messages')
    .select('thread_id')
    .distinct()
    .where('thread_id', 'in', threadIds)
    .where('kind', '=', 'message')
    .where('id', 'not in', newMessageIds)
    .execute();
  return new Set(rows.map((r) => Number(r.thread_id)));
}
