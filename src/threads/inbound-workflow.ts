import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MessagesTable, ThreadStatus } from '../db/types.js';
import { insertNotifications, type NewNotification } from '../notifications/notifications.queries.js';
import type { NotificationRow } from '../notifications/notifications.resources.js';
import { autoAssignedLine, REOPENED_BY_MESSAGE } from './activity.js';
import {
  agentLoads,
  assignUnassigned,
  insertTranscriptLines,
  lockAssignment,
  reopenThreads,
  type TranscriptLine,
} from './thread-workflow.queries.js';

/** A thread an inbound batch upserted, as the upsert returned it (locked until commit). */
export interface InboundThread {
  id: number;
  workspace_id: number;
  connection_id: number;
  status: ThreadStatus;
  assignee_id: number | null;
  created: boolean;
}

export interface InboundWork {
  threads: InboundThread[];
  /** Threads a new inbound message was inserted into (a provider's retry is not new). */
  withNewMessage: Set<number>;
  /** The new inbound messages themselves, in the order they were inserted. */
  newMessages: { id: number; thread_id: number }[];
  /** Connections whose new and reopened threads are assigned automatically. */
  autoAssign: Set<number>;
}

export interface InboundWorkDone {
  /** The activity lines written, in order. */
  activity: Selectable<MessagesTable>[];
  /** Threads opened again (status `open`, no snooze). */
  reopened: number[];
  /** Threads given an assignee. */
  assigned: { id: number; assignee_id: number }[];
  /** Notifications written, each for its user's sockets only. */
  notifications: NotificationRow[];
}

/**
 * What a batch of inbound deliveries does to the conversations it touched, inside the batch's
 * transaction and set-based (a statement per step, however many threads): a new message on a
 * resolved, pending or snoozed thread opens it again; a thread that is new or reopened and has
 * no assignee, on a connection with `autoAssign`, goes to the agent of its workspace with the
 * fewest open threads assigned (ties: the lowest id). Says what it did, for the batch's
 * announcements.
 * The users concerned are notified (docs/teams.md, "Mentions and notifications"): the agent
 * routing gave a thread to (`assigned`), and the assignee of a thread a contact wrote in
 * (`message`; a thread routed in this batch has its `assigned` instead), in one statement.
 * Steps with nothing to do cost no statement, so the common batch (open threads, no
 * auto-assignment, nobody assigned) runs exactly as before.
 */
export async function workInboundThreads(db: Executor, work: InboundWork, at: Date): Promise<InboundWorkDone> {
  const lines: TranscriptLine[] = [];
  /** Writes a line; answers its place among the lines written. */
  const line = (t: { id: number; workspace_id: number; connection_id: number }, text: string) =>
    lines.push({ workspaceId: t.workspace_id, threadId: t.id, connectionId: t.connection_id, text, authorId: null }) - 1;
  const notices: (NewNotification & { line?: number })[] = [];

  const reopened = await reopenThreads(
    db,
    work.threads.filter((t) => t.status !== 'open' && !t.created && work.withNewMessage.has(t.id)).map((t) => t.id),
    at,
  );
  const reopenedIds = new Set(reopened.map((t) => t.id));
  for (const t of reopened) line(t, REOPENED_BY_MESSAGE);

  const assigned: InboundWorkDone['assigned'] = [];
  const candidates = work.threads
    .filter((t) => t.assignee_id === null && work.autoAssign.has(t.connection_id) && (t.created || reopenedIds.has(t.id)))
    .sort((a, b) => a.id - b.id);
  if (candidates.length > 0) {
    const workspaces = [...new Set(candidates.map((t) => t.workspace_id))];
    await lockAssignment(db, workspaces);
    // Counted after the lock: every assignment another transaction made has committed.
    const agents = await agentLoads(db, workspaces);
    const chosen: { threadId: number; assigneeId: number }[] = [];
    const nameOf = new Map(agents.map((a) => [a.id, a.name]));
    for (const t of candidates) {
      let best: (typeof agents)[number] | undefined;
      for (const a of agents) {
        if (a.workspace_id === t.workspace_id && (!best || a.open_threads < best.open_threads)) best = a; // ids ascend: ties keep the lowest
      }
      if (!best) continue; // a workspace with no agent: the thread waits unassigned
      best.open_threads += 1;
      chosen.push({ threadId: t.id, assigneeId: best.id });
    }
    const byId = new Map(candidates.map((t) => [t.id, t]));
    for (const a of await assignUnassigned(db, chosen, at)) {
      assigned.push(a);
      const t = byId.get(a.id)!;
      const place = line(t, autoAssignedLine(nameOf.get(a.assignee_id)!));
      notices.push({
        workspaceId: t.workspace_id,
        userId: a.assignee_id,
        type: 'assigned',
        threadId: t.id,
        messageId: null,
        actorId: null,
        line: place,
      });
    }
  }
  const activity = await insertTranscriptLines(db, 'activity', lines, at);
  const before = new Map(work.threads.map((t) => [t.id, t]));
  for (const m of work.newMessages) {
    const t = before.get(m.thread_id);
    if (t?.assignee_id != null)
      notices.push({ workspaceId: t.workspace_id, userId: t.assignee_id, type: 'message', threadId: t.id, messageId: m.id, actorId: null });
  }
  const notifications = await insertNotifications(
    db,
    notices.map(({ line, ...n }) => (line === undefined ? n : { ...n, messageId: activity[line]?.id ?? null })),
    at,
  );
  return { activity, reopened: [...reopenedIds], assigned, notifications };
}
