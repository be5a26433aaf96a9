import type { Executor } from '../db/database.js';
import type { BusinessHours } from '../sla/business-hours.js';
import { businessTimeBetween } from '../sla/business-time.js';
import { hoursOf, loadHours } from '../sla/sla.service.js';
import type { SlaState } from '../sla/sla-state.js';
import { findOpenConversation, resolveConversation, setFirstResponse } from './conversations.queries.js';

export { type ConversationOpening, insertConversations as recordOpenings } from './conversations.queries.js';

/**
 * Recording conversations for reports (docs/reports.md), each in the transaction of the change
 * that makes it: an opening (./conversations.queries.ts, set-based for inbound batches), the
 * first answer of a user or API key, the resolution. Durations are kept in calendar seconds
 * and in business seconds, on the business hours the thread's SLA clocks follow (its team's,
 * else the workspace's; always open without any).
 */

/** Calendar and business seconds from `from` to `to` for a thread. */
async function durations(db: Executor, thread: { workspace_id: number; team_id: number | null }, from: Date, to: Date) {
  const hours = await loadHours(db, thread.workspace_id, [thread.team_id]);
  const h = hoursOf(thread, hours.workspace, hours.teams) as BusinessHours | null;
  return {
    seconds: Math.round((to.getTime() - from.getTime()) / 1000),
    businessSeconds: Math.round(businessTimeBetween(h, from, to) / 1000),
  };
}

/** The open conversation of a thread as a reply reads it with the thread (no statement more). */
export interface OpenConversation {
  conversation_id: number | null;
  conversation_opened_at: Date | null;
  conversation_answered: boolean | null;
}

/**
 * A user's or API key's reply: the first one answers the thread's open conversation. Costs a
 * statement only for that first one.
 */
export async function recordReply(
  db: Executor,
  thread: OpenConversation & { workspace_id: number; team_id: number | null },
  at: Date,
): Promise<void> {
  if (thread.conversation_id === null || thread.conversation_answered || thread.conversation_opened_at === null) return;
  const d = await durations(db, thread, thread.conversation_opened_at, at);
  await setFirstResponse(db, thread.conversation_id, at, d.seconds, d.businessSeconds);
}

/**
 * recordReply for a caller that has not read the thread's open conversation with it: a message
 * the business starts (`POST /v1/conversations`) into a thread already open answers it as a
 * reply does.
 */
export async function recordReplyTo(db: Executor, thread: { id: number; workspace_id: number; team_id: number | null }, at: Date) {
  const open = await findOpenConversation(db, thread.id);
  if (!open) return;
  await recordReply(
    db,
    { ...thread, conversation_id: open.id, conversation_opened_at: open.opened_at, conversation_answered: open.first_response_at !== null },
    at,
  );
}

/** A thread resolved (as it is now, locked by the caller): its open conversation ends. */
export async function recordResolution(
  db: Executor,
  thread: {
    id: number;
    workspace_id: number;
    team_id: number | null;
    assignee_id: number | null;
    labels: string[];
    priority: string;
    sla: unknown;
  },
  at: Date,
): Promise<void> {
  const open = await findOpenConversation(db, thread.id);
  if (!open) return;
  const d = await durations(db, thread, open.opened_at, at);
  await resolveConversation(db, {
    id: open.id,
    threadId: thread.id,
    at,
    ...d,
    assigneeId: thread.assignee_id,
    teamId: thread.team_id,
    labels: thread.labels,
    priority: thread.priority,
    slaBreaches: (thread.sla as SlaState | null)?.breaches.length ?? 0,
  });
}
