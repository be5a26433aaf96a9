import type { ThreadView } from '../threads/threads.resources.js';
import type { Change } from './announcements.js';
import type { ApplyPlan } from './apply-plan.js';
import type { Written } from './apply-upsert.js';
import type { ThreadRow } from './messaging.queries.js';

/**
 * The thread of a row the batch's statements returned, as its announcement shows it. Written
 * out field by field: a spread of a row of some thirty columns made an object of over a
 * kilobyte, where this one takes a quarter of it. Every column of `threads` is here (the test
 * of this file holds the list to the table), and the row's own `created` and `team_routes`.
 */
export function threadView(t: ThreadRow, integrationKey: string): ThreadView & Pick<ThreadRow, 'created' | 'team_routes'> {
  return {
    id: t.id,
    workspace_id: t.workspace_id,
    connection_id: t.connection_id,
    contact_id: t.contact_id,
    status: t.status,
    snoozed_until: t.snoozed_until,
    assignee_id: t.assignee_id,
    labels: t.labels,
    agent_last_seen_at: t.agent_last_seen_at,
    unread_count: t.unread_count,
    last_message_at: t.last_message_at,
    last_message_preview: t.last_message_preview,
    last_inbound_at: t.last_inbound_at,
    team_id: t.team_id,
    conversation_key: t.conversation_key,
    priority: t.priority,
    sla: t.sla,
    sla_due_at: t.sla_due_at,
    sla_status: t.sla_status,
    away_replied_at: t.away_replied_at,
    conversation_messages_in: t.conversation_messages_in,
    conversation_messages_out: t.conversation_messages_out,
    created_at: t.created_at,
    updated_at: t.updated_at,
    created: t.created,
    contact_name: t.contact_name,
    team_routes: t.team_routes,
    integration_key: integrationKey,
  };
}

/**
 * What a written batch changed, in the order it is announced (pure: `announce` tells it).
 * Threads are shown as they are once the batch is done with them: the statements' rows brought
 * up to date here rather than read again, so the common batch costs no statement more than
 * the upsert and the insert.
 */
export function batchChanges(plan: Pick<ApplyPlan, 'integrationOf'>, written: Written, now: Date): Change[] {
  const changes: Change[] = [];
  for (const c of written.contactsCreated) changes.push({ type: 'contact.created', contact: { ...c, createdAt: now } });

  const views = new Map<number, ThreadView>();
  for (const t of [...written.threads.values(), ...written.touched])
    views.set(t.id, threadView(t, plan.integrationOf.get(t.connection_id)!));
  for (const { threadId, n } of written.unreadTakenBack)
    views.get(threadId)!.unread_count = Math.max(0, views.get(threadId)!.unread_count - n);
  for (const id of written.work.reopened) Object.assign(views.get(id)!, { status: 'open', snoozed_until: null });
  for (const a of written.work.assigned) views.get(a.id)!.assignee_id = a.assignee_id;

  for (const t of written.threads.values()) if (t.created) changes.push({ type: 'thread.created', thread: views.get(t.id)! });
  const touched = new Set<number>();
  const updated = (threadId: number) => {
    if (touched.has(threadId)) return;
    touched.add(threadId);
    changes.push({ type: 'thread.updated', thread: views.get(threadId)! });
  };
  for (const id of written.openedThreadIds) updated(id);
  for (const m of written.messages) {
    changes.push({ type: 'message.created', message: m });
    updated(m.thread_id);
  }
  for (const m of written.work.activity) changes.push({ type: 'message.created', message: m });
  for (const n of written.work.notifications) changes.push({ type: 'notification.created', notification: n });
  for (const m of written.statuses) changes.push({ type: 'message.updated', message: m });
  return changes;
}
