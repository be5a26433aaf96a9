import type { PendingAttachmentInput } from '../attachments/fetch-media.queries.js';
import { threadPreview } from './announcements.js';
import { type Receipt, strongest } from './early-receipts.js';
import type { NormalisedEvent } from './events.js';
import {
  type ConnectionRef,
  type HandleInput,
  type InboundMessageInput,
  type StatusInput,
  type ThreadInput,
  type ThreadRow,
  threadKey,
} from './messaging.queries.js';

/**
 * What applying a batch writes, decided without I/O: ./apply-upsert.ts writes it, ./apply-views.ts
 * says what it changed. Part of the decision waits on the database's answers (the contacts' ids,
 * the threads a reference names, the messages a retry had stored already); the pure steps below
 * the plan take those answers, so every rule of the write is here and testable without a database.
 */

/** One delivery's events, ready to apply. */
export interface DeliveryEvents {
  deliveryId: string;
  integrationKey: string;
  events: NormalisedEvent[];
  /**
   * The one account the delivery may touch, when its verification established one: it came
   * through a connection's own URL, or its secret names a Telegram bot. An event naming another
   * account (or a sent message of another account) is dropped.
   */
  account?: string;
}

/** A sent message a receipt resolved by `sent_message` names: its connection, that connection's account, and app. */
export interface SentMessageRef {
  connectionId: number;
  account: string;
  appId: string;
}

/** Where resolved events go: connections by `key|account`, sent messages by `key|provider id`. */
export interface Resolved {
  connections: Map<string, ConnectionRef>;
  sentMessages: Map<string, SentMessageRef>;
}

export const byKey = (integrationKey: string, id: string) => `${integrationKey}|${id}`;

export type InboundEvent = Extract<NormalisedEvent, { type: 'message' }>;
type OpenedEvent = Extract<NormalisedEvent, { type: 'conversation' }>;

export interface PlannedMessage {
  connection: ConnectionRef;
  event: InboundEvent;
  /** The delivery that brought it: a file inside the delivery is read again from its raw body. */
  deliveryId: string;
}

export interface ApplyPlan {
  /**
   * Inbound messages, one per (connection, provider id): the same provider message twice in one
   * batch (a provider's retry) is inserted once, as the last copy says, in the place of the first.
   */
  messages: PlannedMessage[];
  /** Conversations a contact opened without a message. */
  opened: { connection: ConnectionRef; event: OpenedEvent }[];
  /** The contact of every inbound message (retries included) and conversation, in event order. */
  handles: HandleInput[];
  /** The messages the inbound ones answer, to find the thread they join. */
  references: { connectionId: number; externalId: string }[];
  /** Receipts, one per message: of several in one batch, the one that moves it furthest. */
  statuses: StatusInput[];
  /** Each of `statuses` as its delivery named it: kept if it moves no message (./early-receipts.ts). */
  receiptOf: Map<StatusInput, Receipt>;
  /** Receipts naming no message their integration has sent (yet), one per message and account. */
  unsent: Receipt[];
  /** Connections whose new and reopened threads are assigned automatically. */
  autoAssign: Set<number>;
  /** Connections of workspaces with an enabled SLA policy: their threads' clocks move. */
  sla: Set<number>;
  /** The away message of each connection that has one. */
  awayMessages: Map<number, string>;
  /** The integration key of each connection the batch writes threads on (thread views show it). */
  integrationOf: Map<number, string>;
}

/** The contact ids upsertContacts answered, by `workspace|integration key|external id`. */
export type ContactIds = Map<string, number>;
/** The threads a batch upserted, by `connection|contact|conversation key` (see threadKey). */
export type UpsertedThreads = Map<string, ThreadRow>;
/** The thread each message answers by reference, where it answers one of its sender's. */
export type Joined = Map<InboundEvent, number>;

/** The plan of the events of deliveries that resolved (see `resolveConnections`). */
export function planBatch(deliveries: DeliveryEvents[], resolved: Resolved): ApplyPlan {
  const { connections, sentMessages } = resolved;
  const inbound: PlannedMessage[] = [];
  const opened: ApplyPlan['opened'] = [];
  const statuses = new Map<string, StatusInput>();
  const receiptOf = new Map<StatusInput, Receipt>();
  const unsent = new Map<string, Receipt>();
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.type === 'message') {
        inbound.push({ connection: connections.get(byKey(d.integrationKey, e.externalAccountId))!, event: e, deliveryId: d.deliveryId });
        continue;
      }
      if (e.type === 'conversation') {
        opened.push({ connection: connections.get(byKey(d.integrationKey, e.externalAccountId))!, event: e });
        continue;
      }
      const connectionId =
        e.resolveBy === 'sent_message'
          ? sentMessages.get(byKey(d.integrationKey, e.externalMessageId))?.connectionId
          : connections.get(byKey(d.integrationKey, e.externalAccountId))?.id;
      const receipt: Receipt = {
        integrationKey: d.integrationKey,
        account: e.resolveBy === 'account' ? e.externalAccountId : (d.account ?? null),
        externalId: e.externalMessageId,
        status: e.status,
        error: e.error ?? null,
      };
      if (connectionId === undefined) {
        // A receipt for no known message: its send may not be recorded yet.
        const key = `${receipt.integrationKey}|${receipt.externalId}|${receipt.account ?? ''}`;
        unsent.set(key, strongest(unsent.get(key), receipt));
        continue;
      }
      const key = `${connectionId}|${e.externalMessageId}`;
      const before = statuses.get(key);
      const input = strongest(before, { connectionId, externalId: e.externalMessageId, status: e.status, error: e.error ?? null });
      if (input !== before) {
        statuses.set(key, input);
        receiptOf.set(input, receipt);
      }
    }
  }
  const unique = new Map<string, PlannedMessage>();
  for (const item of inbound) unique.set(`${item.connection.id}|${item.event.externalMessageId}`, item);
  const messages = [...unique.values()];
  const all = [...inbound, ...opened];
  return {
    messages,
    opened,
    handles: all.map(({ connection, event }) => ({
      workspaceId: connection.workspace_id,
      integrationKey: connection.integration_key,
      externalId: event.contact.externalId,
      name: event.contact.name ?? null,
    })),
    references: messages.flatMap(({ connection, event }) =>
      (event.references ?? []).map((externalId) => ({ connectionId: connection.id, externalId })),
    ),
    statuses: [...statuses.values()],
    receiptOf,
    unsent: [...unsent.values()],
    autoAssign: new Set(all.filter(({ connection }) => connection.auto_assign).map(({ connection }) => connection.id)),
    sla: new Set(all.filter(({ connection }) => connection.sla).map(({ connection }) => connection.id)),
    awayMessages: new Map(
      all.flatMap(({ connection: c }) => (c.away_message === null ? [] : [[c.id, c.away_message] as [number, string]])),
    ),
    integrationOf: new Map(all.map(({ connection }) => [connection.id, connection.integration_key])),
  };
}

const at = (e: { occurredAt?: Date }, now: Date) => e.occurredAt ?? now;
/** The thread's preview of a contact's message: a photo or a voice note alone shows `[image]`, `[audio]`… */
const previewOf = (e: InboundEvent) => threadPreview(e.text, e.attachments?.map((a) => a.kind) ?? []);
const contactOf = (ids: ContactIds, c: ConnectionRef, externalId: string) =>
  ids.get(`${c.workspace_id}|${c.integration_key}|${externalId}`)!;
const ownThreadOf = (threads: UpsertedThreads, ids: ContactIds, c: ConnectionRef, externalId: string) =>
  threads.get(threadKey(c.id, contactOf(ids, c, externalId)))!;

/**
 * The thread each inbound message joins (e-mail threading, docs/email.md "Threads"): the
 * thread of the first of its `references` that is a message of the same connection and whose
 * contact is the sender, whether stored (`found`: what findThreadsOfMessages answered for the
 * plan's `references`) or earlier in this batch. A Message-ID is no credential: anyone who saw
 * one (a Cc, a forwarded mail) could name it, and an agent would then answer a stranger's
 * words in the customer's thread. A message that joins none goes to a thread of its own key
 * (see `conversationKey`): an e-mail opens a new conversation, any other message goes to its
 * contact's one thread on the connection.
 */
export function threadChoices(
  plan: ApplyPlan,
  found: Map<string, { threadId: number; contactId: number }>,
  contactIds: ContactIds,
): ThreadChoices {
  const joined: Joined = new Map();
  const keys = new Map<InboundEvent, string>();
  const inBatch = new Map<string, { sender: number; event: InboundEvent }>();
  for (const { connection, event } of plan.messages) {
    // The common batch: no e-mail, and no message names a known one; every message keeps its
    // contact's one thread (key '') and no sender's contact needs looking up.
    if (!event.email && !(found.size > 0 && event.references?.length)) continue;
    const sender = contactOf(contactIds, connection, event.contact.externalId);
    let choice: { threadId: number } | { key: string } | undefined;
    for (const ref of event.references ?? []) {
      const thread = found.get(`${connection.id}|${ref}`);
      if (thread) {
        if (thread.contactId === sender) choice = { threadId: thread.threadId };
      } else {
        const earlier = inBatch.get(`${connection.id}|${ref}`);
        if (earlier?.sender === sender) {
          const threadId = joined.get(earlier.event);
          choice = threadId === undefined ? { key: keys.get(earlier.event)! } : { threadId };
        }
      }
      if (choice) break;
    }
    if (choice && 'threadId' in choice) joined.set(event, choice.threadId);
    else keys.set(event, choice?.key ?? conversationKey(event));
    inBatch.set(`${connection.id}|${event.externalMessageId}`, { sender, event });
  }
  return { joined, keys };
}

/** What threadChoices decided: the known thread a message joins, else the key of its own. */
export interface ThreadChoices {
  joined: Joined;
  keys: Map<InboundEvent, string>;
}

/**
 * The conversation a message opens when it joins none: an e-mail its own (its Message-ID, so
 * a provider's retry of it finds the same thread), anything else the contact's one thread.
 */
export function conversationKey(event: InboundEvent): string {
  return event.email ? event.externalMessageId : '';
}

/** The threads to upsert: the own thread of each message that joins none, and of each conversation opened. */
export function threadInputs(plan: ApplyPlan, contactIds: ContactIds, choices: ThreadChoices, now: Date): ThreadInput[] {
  return [...plan.messages.filter(({ event }) => !choices.joined.has(event)), ...plan.opened].map(({ connection, event }) => {
    return {
      workspaceId: connection.workspace_id,
      connectionId: connection.id,
      contactId: contactOf(contactIds, connection, event.contact.externalId),
      conversationKey: (event.type === 'message' && choices.keys.get(event)) || '',
      lastMessageAt: at(event, now),
      preview: event.type === 'message' ? previewOf(event) : null,
      unread: event.type === 'message' ? 1 : 0,
      lastInboundAt: event.type === 'message' ? at(event, now) : null,
      teamId: connection.team_id,
    };
  });
}

/** The thread of each of the plan's messages, in order: the one it joined, else its own. */
export function messageThreads(plan: ApplyPlan, contactIds: ContactIds, choices: ThreadChoices, threads: UpsertedThreads): number[] {
  return plan.messages.map(
    ({ connection, event }) =>
      choices.joined.get(event) ??
      threads.get(threadKey(connection.id, contactOf(contactIds, connection, event.contact.externalId), choices.keys.get(event)))!.id,
  );
}

/** The thread of each conversation opened, in order. */
export function openedThreads(plan: ApplyPlan, contactIds: ContactIds, threads: UpsertedThreads): number[] {
  return plan.opened.map(({ connection, event }) => ownThreadOf(threads, contactIds, connection, event.contact.externalId).id);
}

/** The messages to insert; `threadIds` as messageThreads answered. */
export function messageInputs(plan: ApplyPlan, threadIds: number[], now: Date): InboundMessageInput[] {
  return plan.messages.map(({ connection, event }, i) => ({
    workspaceId: connection.workspace_id,
    threadId: threadIds[i]!,
    connectionId: connection.id,
    externalId: event.externalMessageId,
    text: event.text,
    createdAt: at(event, now),
    email: event.email ?? null,
    html: event.html ?? null,
    quotedText: event.quotedText ?? null,
  }));
}

/** Threads joined by reference move on as a contact's own do: last message, preview, unread. */
export function threadTouches(plan: ApplyPlan, joined: Joined, now: Date) {
  return plan.messages.flatMap(({ event }) => {
    const threadId = joined.get(event);
    return threadId === undefined ? [] : [{ threadId, lastMessageAt: at(event, now), preview: previewOf(event) }];
  });
}

/**
 * The attachments of the messages this batch inserted (a message stored by an earlier
 * delivery keeps the attachments it got then). A file inside the delivery names the delivery,
 * so the job can read it again from the stored raw body.
 */
export function pendingAttachments(
  plan: ApplyPlan,
  inserted: { id: number; connection_id: number | null; external_id: string | null; workspace_id: number }[],
): PendingAttachmentInput[] {
  const byMessage = new Map(plan.messages.map((m) => [`${m.connection.id}|${m.event.externalMessageId}`, m]));
  return inserted.flatMap((m) => {
    const planned = byMessage.get(`${m.connection_id}|${m.external_id}`);
    return (planned?.event.attachments ?? []).map((a) => ({
      workspaceId: m.workspace_id,
      messageId: m.id,
      kind: a.kind,
      contentType: a.contentType,
      filename: a.filename,
      source: a.source.from === 'delivery' ? { ...a.source, deliveryId: planned!.deliveryId } : a.source,
    }));
  });
}

/**
 * Unread counts to take back: a message the upserts counted as unread but the insert skipped
 * (stored by an earlier delivery). `threadIds` as messageThreads answered.
 */
export function unreadCorrections(threadIds: number[], inserted: { thread_id: number }[]): { threadId: number; n: number }[] {
  const skipped = new Map<number, number>();
  for (const id of threadIds) skipped.set(id, (skipped.get(id) ?? 0) + 1);
  for (const m of inserted) skipped.set(m.thread_id, skipped.get(m.thread_id)! - 1);
  return [...skipped].filter(([, n]) => n > 0).map(([threadId, n]) => ({ threadId, n }));
}
