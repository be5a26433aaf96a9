import type { PgBoss } from 'pg-boss';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import type { Executor } from '../db/database.js';
import { type MessageRow, threadPreview } from '../messaging/announcements.js';
import { queueMessage } from '../replies/queue-message.js';
import { RECEIVE_ONLY } from '../replies/send-policy.js';
import { AWAY_REPLY_SENT } from '../threads/activity.js';
import { insertTranscriptLines } from '../threads/thread-workflow.queries.js';
import type { BusinessHours } from './business-hours.js';
import { insideBusinessHours } from './business-time.js';
import { markAwayReplied, threadsWithEarlierMessages } from './sla.queries.js';
import { hoursOf, loadHours, moveSla, type SlaEvent, type SlaThread } from './sla.service.js';

/** A connection's away message answers a thread at most once in this long. */
export const AWAY_REPLY_INTERVAL_MS = 12 * 3_600_000;

/** A thread an inbound batch wrote, as its statements returned it. */
export interface InboundSlaThread extends SlaThread {
  status: string;
  created: boolean;
  away_replied_at: Date | null;
  last_inbound_at: Date | null;
  sla_due_at: Date | null;
  sla_status: string | null;
  last_message_at: Date;
  last_message_preview: string | null;
  conversation_messages_out: number;
}

export interface InboundSlaWork {
  threads: InboundSlaThread[];
  /** Threads opened again by this batch. */
  reopened: Set<number>;
  /** Threads a new inbound message was inserted into. */
  withNewMessage: Set<number>;
  /** Of those, the threads with a new message a person wrote (not an auto-reply, a list or a bounce). */
  answerable: Set<number>;
  /** The ids of those messages. */
  newMessageIds: number[];
  /** Connections of workspaces with an enabled SLA policy. */
  sla: Set<number>;
  /** The away message of each connection that has one. */
  awayMessages: Map<number, string>;
  integrationOf: Map<number, string>;
}

const byWorkspace = <T extends { workspace_id: number }>(rows: T[]) => {
  const groups = new Map<number, T[]>();
  for (const r of rows) groups.set(r.workspace_id, [...(groups.get(r.workspace_id) ?? []), r]);
  return groups;
};

/**
 * What an inbound batch does for SLAs and away replies (docs/sla.md), in its transaction.
 * The batch's connections say whether their workspace has a policy and whether they have an
 * away message (read with them, no statement more), so a batch of neither costs nothing here.
 * The rows are brought up to date in place (the batch's views show them); the messages
 * written (away replies and their activity lines) are returned to be announced.
 */
export async function workInboundSla(deps: { boss: PgBoss }, trx: Executor, work: InboundSlaWork, now: Date): Promise<MessageRow[]> {
  const opened = (t: InboundSlaThread) => t.created || work.reopened.has(t.id);
  // A new opening of the clocks is a new thread or one the message took out of `resolved`, as
  // for the reports; a pending or snoozed thread made open again keeps its clocks (they ran
  // meanwhile) and the message is the contact's like any other.
  const newOpening = (t: InboundSlaThread) => t.created || (work.reopened.has(t.id) && t.status === 'resolved');
  const clocked = work.threads.filter((t) => work.sla.has(t.connection_id) && (opened(t) || work.withNewMessage.has(t.id)));
  for (const [workspaceId, threads] of byWorkspace(clocked)) {
    const items = threads.map((thread) => ({ thread, event: (newOpening(thread) ? 'opened' : 'contact') as SlaEvent }));
    const changed = await moveSla(deps, trx, workspaceId, items, now);
    for (const t of threads) if (changed.has(t.id)) Object.assign(t, changed.get(t.id));
  }

  const integration = (t: InboundSlaThread) => work.integrationOf.get(t.connection_id)!;
  const candidates = work.threads.filter(
    (t) =>
      work.awayMessages.has(t.connection_id) &&
      work.answerable.has(t.id) &&
      (t.away_replied_at === null || now.getTime() - t.away_replied_at.getTime() >= AWAY_REPLY_INTERVAL_MS) &&
      // Where the channel cannot send, nothing is tried (and nothing said).
      !RECEIVE_ONLY.has(integration(t)) &&
      (replyWindowEndsAt(integration(t), t.last_inbound_at)?.getTime() ?? Number.POSITIVE_INFINITY) > now.getTime(),
  );
  // A thread made empty (a live chat conversation, started before its first words) is opened
  // by its first message: one statement, only for threads already open that an away message could answer.
  const unopened = candidates.filter((t) => !opened(t)).map((t) => t.id);
  const writtenBefore = await threadsWithEarlierMessages(trx, unopened, work.newMessageIds);
  const away = candidates.filter((t) => opened(t) || !writtenBefore.has(t.id));
  const written: MessageRow[] = [];
  for (const [workspaceId, threads] of byWorkspace(away)) {
    const hours = await loadHours(
      trx,
      workspaceId,
      threads.map((t) => t.team_id),
    );
    const outside = threads.filter((t) => !insideBusinessHours(hoursOf(t, hours.workspace, hours.teams) as BusinessHours | null, now));
    for (const t of outside) {
      const message = await queueMessage(
        deps.boss,
        trx,
        {
          workspaceId,
          threadId: t.id,
          connectionId: t.connection_id,
          text: work.awayMessages.get(t.connection_id)!,
          attachmentIds: [],
          authorId: null,
          automation: true,
        },
        now,
      );
      written.push(message);
      // The reply is now the thread's last message (queueMessage wrote it so): the batch's
      // thread.updated shows the thread as stored, not as the contact's message left it.
      Object.assign(t, {
        away_replied_at: now,
        last_message_at: now,
        last_message_preview: threadPreview(message.text, []),
        conversation_messages_out: t.conversation_messages_out + 1,
      });
    }
    const lines = await insertTranscriptLines(
      trx,
      'activity',
      outside.map((t) => ({ workspaceId, threadId: t.id, connectionId: t.connection_id, text: AWAY_REPLY_SENT, authorId: null })),
      now,
    );
    written.push(...lines);
    await markAwayReplied(
      trx,
      outside.map((t) => t.id),
      now,
    );
  }
  return written;
}
