import type { ThreadView } from '../threads/threads.resources.js';
import type { Change } from './announcements.js';
import type { ApplyPlan } from './apply-plan.js';
import type { Written } from './apply-upsert.js';

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
    views.set(t.id, { ...t, integration_key: plan.integrationOf.get(t.connection_id)! });
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
