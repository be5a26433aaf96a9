import { insertPendingAttachments } from '../attachments/fetch-media.queries.js';
import type { Executor } from '../db/database.js';
import { recordOpenings } from '../reports/record.js';
import { type InboundWorkDone, workInboundThreads } from '../threads/inbound-workflow.js';
import type { MessageRow } from './announcements.js';
import {
  type ApplyPlan,
  messageInputs,
  messageThreads,
  openedThreads,
  pendingAttachments,
  threadChoices,
  threadInputs,
  threadTouches,
  type UpsertedThreads,
  unreadCorrections,
} from './apply-plan.js';
import { keepEarlyReceipts } from './early-receipts.js';
import {
  applyStatuses,
  findThreadsOfMessages,
  type HandleInput,
  insertInboundMessages,
  type ThreadRow,
  touchThreads,
  uncountUnread,
  upsertContacts,
  upsertThreads,
} from './messaging.queries.js';

/** What a batch wrote, as the statements returned it: what ./apply-views.ts announces. */
export interface Written {
  contactsCreated: (HandleInput & { id: number })[];
  threads: UpsertedThreads;
  /** Threads joined by reference, as touchThreads left them. */
  touched: ThreadRow[];
  /** The thread of each conversation opened, in order. */
  openedThreadIds: number[];
  /** The messages inserted (a provider's retry of a stored one is not). */
  messages: MessageRow[];
  /** Unread counts taken back for messages the insert skipped. */
  unreadTakenBack: { threadId: number; n: number }[];
  /** Reopening, automatic assignment and their activity lines. */
  work: InboundWorkDone;
  /** Outbound messages a receipt moved on. */
  statuses: MessageRow[];
  /** Attachments written `pending`, to be downloaded. */
  attachmentIds: number[];
  /** The messages inserted with no attachment, whose attachments announce need not read. */
  bare: Set<number>;
}

/** What a batch with nothing to write returns: a batch of receipts only leaves the rest so. */
export function nothingWritten(): Written {
  return {
    contactsCreated: [],
    threads: new Map(),
    touched: [],
    openedThreadIds: [],
    messages: [],
    unreadTakenBack: [],
    work: { activity: [], reopened: [], assigned: [], notifications: [] },
    statuses: [],
    attachmentIds: [],
    bare: new Set(),
  };
}

/**
 * Writes a plan in the caller's transaction, set-based: one statement each for contacts,
 * threads, messages, their attachments and receipts however many deliveries the batch holds.
 * Steps with nothing to write cost no statement.
 */
export async function writePlan(db: Executor, plan: ApplyPlan, now: Date): Promise<Written> {
  const written = nothingWritten();
  if (plan.messages.length > 0 || plan.opened.length > 0) {
    const contacts = await upsertContacts(db, plan.handles, now);
    written.contactsCreated = contacts.created;
    const choices = threadChoices(plan, await findThreadsOfMessages(db, plan.references), contacts.ids);
    const threads = await upsertThreads(db, threadInputs(plan, contacts.ids, choices, now), now);
    written.threads = threads;
    written.openedThreadIds = openedThreads(plan, contacts.ids, threads);
    const threadIds = messageThreads(plan, contacts.ids, choices, threads);
    const inserted = await insertInboundMessages(db, messageInputs(plan, threadIds, now), now);
    written.messages = inserted;
    const pending = pendingAttachments(plan, inserted);
    written.attachmentIds = await insertPendingAttachments(db, pending, now);
    const withFiles = new Set(pending.map((a) => a.messageId));
    for (const m of inserted) if (!withFiles.has(m.id)) written.bare.add(m.id);
    written.touched = await touchThreads(db, threadTouches(plan, choices.joined, now), now);
    written.unreadTakenBack = unreadCorrections(threadIds, inserted);
    await uncountUnread(db, written.unreadTakenBack);
    // Reopening and automatic assignment (docs/conversations.md), in this batch's statements.
    written.work = await workInboundThreads(
      db,
      {
        threads: [...threads.values(), ...written.touched],
        withNewMessage: new Set(inserted.map((m) => m.thread_id)),
        byPerson: new Set(inserted.filter((m) => !m.email?.automatic).map((m) => m.thread_id)),
        newMessages: inserted,
        autoAssign: plan.autoAssign,
      },
      now,
    );
    // Activity lines carry no attachment: announce need not look for any.
    for (const line of written.work.activity) written.bare.add(line.id);
    // Reports (docs/reports.md): a new thread and one a message took out of `resolved` open a
    // conversation, in one statement, only in a batch that has one.
    const reopened = new Set(written.work.reopened);
    await recordOpenings(
      db,
      [...threads.values(), ...written.touched]
        .filter((t) => t.created || (t.status === 'resolved' && reopened.has(t.id)))
        .map((t) => ({ workspaceId: t.workspace_id, threadId: t.id, connectionId: t.connection_id, reopened: !t.created })),
      now,
    );
  }
  written.statuses = await applyStatuses(db, plan.statuses, now);
  // A receipt that moved nothing may name a send not recorded yet: kept for it, or applied if
  // the send was recorded since (./early-receipts.ts).
  if (written.statuses.length < plan.statuses.length || plan.unsent.length > 0) {
    const moved = new Set(written.statuses.map((m) => `${m.connection_id}|${m.external_id}`));
    const idle = plan.statuses.filter((s) => !moved.has(`${s.connectionId}|${s.externalId}`)).map((s) => plan.receiptOf.get(s)!);
    written.statuses.push(...(await keepEarlyReceipts(db, [...idle, ...plan.unsent], now)));
  }
  return written;
}
