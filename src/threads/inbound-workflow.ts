import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MessagesTable, ThreadStatus } from '../db/types.js';
import { insertNotifications, type NewNotification } from '../notifications/notifications.queries.js';
import type { NotificationRow } from '../notifications/notifications.resources.js';
import { REOPENED_BY_MESSAGE } from './activity.js';
import { routeThreads } from './routing.js';
import { insertTranscriptLines, reopenThreads, type TranscriptLine } from './thread-workflow.queries.js';

/** A thread an inbound batch upserted, as the upsert returned it (locked until commit). */
export interface InboundThread {
  id: number;
  workspace_id: number;
  connection_id: number;
  status: ThreadStatus;
  assignee_id: number | null;
  team_id: number | null;
  /** The thread's team has `autoAssign`. */
  team_routes: boolean;
  created: boolean;
}

export interface InboundWork {
  threads: InboundThread[];
  /** Threads a new inbound message was inserted into (a provider's retry is not new). */
  withNewMessage: Set<number>;
  /**
   * Of those, the threads whose new message a person wrote: an auto-reply, a list's mail or a
   * bounce (`email.automatic`) is shown but reopens nothing, or an out-of-office answer to the
   * agent's last reply would reopen every conversation it closed.
   */
  byPerson: Set<number>;
  /** The new inbound messages themselves, in the order they were inserted. */
  newMessages: { id: number; thread_id: number }[];
  /** Connections whose new and reopened threads are routed (besides those of routing teams). */
  autoAssign: Set<number>;
}

export interface InboundWorkDone {
  /** The activity lines written, in order. */
  activity: Selectable<MessagesTable>[];
  /** Threads opened again (status `open`, no snooze). */
  reopened: number[];
  /** Threads given an assignee. */
  assigned: { id: number; assignee_id: number }[];
  /** Notifications written for the users concerned. */
  notifications: NotificationRow[];
}

/**
 * What a batch of inbound deliveries does to the conversations it touched, inside the batch's
 * transaction and set-based (a statement per step, however many threads): a new message a
 * person wrote on a resolved, pending or snoozed thread opens it again; a thread with no
 * assignee that is new, reopened or waiting (open, and a new message came), on a connection
 * or in a team with `autoAssign`, is routed (./routing.ts). Says what it did, for the
 * batch's announcements. Steps with nothing to do cost no statement, so the common batch
 * (open threads, no routing) runs exactly as before: the team's `autoAssign` comes with the
 * upserted rows, and the routing lock is taken only when something is routed.
 * The users concerned are notified (docs/teams.md, "Mentions and notifications"): the agent
 * routing gave a thread to (`assigned`), and the assignee of a thread a contact wrote in
 * (`message`; a thread routed in this batch has its `assigned` instead), in one statement.
 */
export async function workInboundThreads(db: Executor, work: InboundWork, at: Date): Promise<InboundWorkDone> {
  const lines: TranscriptLine[] = [];
  const line = (t: { id: number; workspace_id: number; connection_id: number }, text: string) =>
    lines.push({ workspaceId: t.workspace_id, threadId: t.id, connectionId: t.connection_id, text, authorId: null });

  const reopened = await reopenThreads(
    db,
    work.threads.filter((t) => t.status !== 'open' && !t.created && work.byPerson.has(t.id)).map((t) => t.id),
    at,
  );
  const reopenedIds = new Set(reopened.map((t) => t.id));
  for (const t of reopened) line(t, REOPENED_BY_MESSAGE);

  const routable = work.threads
    .filter(
      (t) =>
        t.assignee_id === null &&
        (t.created || reopenedIds.has(t.id) || (t.status === 'open' && work.withNewMessage.has(t.id))) &&
        (work.autoAssign.has(t.connection_id) || t.team_routes),
    )
    .sort((a, b) => a.id - b.id);
  // Lines of reopening first, so each precedes its thread's routing line in the transcript.
  const activity = await insertTranscriptLines(db, 'activity', lines, at);
  const routed = await routeThreads(db, routable, at);
  const assigned: InboundWorkDone['assigned'] = routed.map((r) => ({ id: r.id, assignee_id: r.assignee_id }));
  const notices: NewNotification[] = [];
  for (const r of routed) {
    activity.push(r.line);
    notices.push({
      workspaceId: r.line.workspace_id,
      userId: r.assignee_id,
      type: 'assigned',
      threadId: r.id,
      messageId: r.line.id,
      actorId: null,
    });
  }
  const before = new Map(work.threads.map((t) => [t.id, t]));
  for (const m of work.newMessages) {
    const t = before.get(m.thread_id);
    if (t?.assignee_id != null)
      notices.push({ workspaceId: t.workspace_id, userId: t.assignee_id, type: 'message', threadId: t.id, messageId: m.id, actorId: null });
  }
  const notifications = await insertNotifications(db, notices, at);
  return { activity, reopened: [...reopenedIds], assigned, notifications };
}
