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
 * Where the thread's current opening began and its first reply of a user or API key since (not
 * an automated one: a rule's, an away reply, a survey), or undefined without an open
 * conversation: what a policy that first applies later in the opening starts its clocks from.
 */
export async function currentOpening(db: Executor, threadId: number) {
  const open = await findOpenConversation(db, threadId);
  if (!open) return undefined;
  const reply = await db
    .selectFrom('messages')
    .select('created_at')
    .where('thread_id', '=', threadId)
    .where('direction', '=', 'outbound')
    .where('kind', '=', 'message')
    .where('automation', '=', false)
    .where('created_at', '>=', open.opened_at)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  return { openedAt: open.opened_at, firstReplyAt: reply?.created_at ?? null };
}

/** A thread's SLA and what its policy and hours read, locked until the transaction ends. */
export async function lockSlaThread(db: Executor, id: number) {
  return db
    .selectFrom('threads')
    .select(['id', 'workspace_id', 'connection_id', 'team_id', 'assignee_id', 'priority', 'labels', 'status', 'sla'])
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
