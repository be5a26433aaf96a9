import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MessagesTable, ThreadStatus } from '../db/types.js';
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
}

/**
 * What a batch of inbound deliveries does to the conversations it touched, inside the batch's
 * transaction and set-based (a statement per step, however many threads): a new message on a
 * resolved, pending or snoozed thread opens it again; a thread with no assignee that is new,
 * reopened or waiting (open, and a new message came), on a connection or in a team with
 * `autoAssign`, is routed (./routing.ts). Says what it did, for the batch's announcements.
 * Steps with nothing to do cost no statement, so the common batch (open threads, no
 * routing) runs exactly as before: the team's `autoAssign` comes with the upserted rows, and
 * the routing lock is taken only when something is routed.
 */
export async function workInboundThreads(db: Executor, work: InboundWork, at: Date): Promise<InboundWorkDone> {
  const lines: TranscriptLine[] = [];
  const line = (t: { id: number; workspace_id: number; connection_id: number }, text: string) =>
    lines.push({ workspaceId: t.workspace_id, threadId: t.id, connectionId: t.connection_id, text, authorId: null });

  const reopened = await reopenThreads(
    db,
    work.threads.filter((t) => t.status !== 'open' && !t.created && work.withNewMessage.has(t.id)).map((t) => t.id),
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
  const routed = await routeThreads(db, routable, at);
  const assigned: InboundWorkDone['assigned'] = routed.map((r) => ({ id: r.id, assignee_id: r.assignee_id }));
  lines.push(...routed.map((r) => r.line));
  return { activity: await insertTranscriptLines(db, 'activity', lines, at), reopened: [...reopenedIds], assigned };
}
