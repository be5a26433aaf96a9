import { enqueueFetchMedia } from '../attachments/fetch-media.enqueue.js';
import { insertPendingAttachments, type PendingAttachmentInput } from '../attachments/fetch-media.queries.js';
import type { Executor } from '../db/database.js';
import { workInboundThreads } from '../threads/inbound-workflow.js';
import type { ThreadView } from '../threads/threads.resources.js';
import { type Announcer, announce } from './announce.js';
import { type Change, PREVIEW_LENGTH } from './announcements.js';
import type { NormalisedEvent } from './events.js';
import {
  applyStatuses,
  type ConnectionRef,
  findConnectionsByAccount,
  findOutboundByExternalId,
  findThreadsOfMessages,
  insertInboundMessages,
  type StatusInput,
  touchThreads,
  uncountUnread,
  upsertContacts,
  upsertThreads,
} from './messaging.queries.js';

/** One delivery's events, ready to apply. */
export interface DeliveryEvents {
  deliveryId: string;
  integrationKey: string;
  events: NormalisedEvent[];
}

export interface DeliveryResolution {
  /**
   * The app the delivery belongs to: the one app its resolved events belong to, set even if the
   * delivery then fails (so that app's admin can see and requeue it). A body whose
   * events resolve to connections of several apps belongs to none: its row (raw body and all)
   * is shown to the operator only, never to a tenant whose events happen to be in it.
   */
  appId: string | null;
  /** Why the delivery cannot be applied, when it cannot. */
  error?: string;
}

const STATUS_RANK = { sent: 1, delivered: 2, read: 3 } as const;

/** A sent message a receipt resolved by `sent_message` names: its connection and app. */
interface SentMessageRef {
  connectionId: number;
  appId: string;
}

/** Where resolved events go: connections by `key|account`, sent messages by `key|provider id`. */
interface Resolved {
  connections: Map<string, ConnectionRef>;
  sentMessages: Map<string, SentMessageRef>;
}

const byKey = (integrationKey: string, id: string) => `${integrationKey}|${id}`;

/**
 * Resolves every delivery's events to connections. A delivery naming an account that no
 * workspace has connected cannot be applied; it fails like any processing error, so it can be
 * requeued once the account is connected. A receipt resolved by `sent_message` goes through the
 * message it names (sent through the delivery's integration) and can never claim an account;
 * one naming no such message resolves to nothing and is skipped.
 */
async function resolveConnections(db: Executor, deliveries: DeliveryEvents[]) {
  const wanted = new Map<string, { integrationKey: string; externalAccountId: string }>();
  const sentIds = new Map<string, Set<string>>();
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.type === 'status' && e.resolveBy === 'sent_message') {
        let ids = sentIds.get(d.integrationKey);
        if (!ids) {
          ids = new Set();
          sentIds.set(d.integrationKey, ids);
        }
        ids.add(e.externalMessageId);
      } else
        wanted.set(byKey(d.integrationKey, e.externalAccountId), {
          integrationKey: d.integrationKey,
          externalAccountId: e.externalAccountId,
        });
    }
  }
  const resolved: Resolved = { connections: new Map(), sentMessages: new Map() };
  for (const c of await findConnectionsByAccount(db, [...wanted.values()]))
    resolved.connections.set(byKey(c.integration_key, c.external_account_id), c);
  for (const [integrationKey, ids] of sentIds) {
    for (const m of await findOutboundByExternalId(db, integrationKey, [...ids])) {
      resolved.sentMessages.set(byKey(integrationKey, m.external_id), { connectionId: m.connection_id, appId: m.app_id });
    }
  }

  const resolutions = new Map<string, DeliveryResolution>();
  for (const d of deliveries) {
    const resolution: DeliveryResolution = { appId: null };
    const apps = new Set<string>();
    for (const e of d.events) {
      let app: string | undefined;
      if (e.type === 'status' && e.resolveBy === 'sent_message') {
        app = resolved.sentMessages.get(byKey(d.integrationKey, e.externalMessageId))?.appId;
      } else {
        const c = resolved.connections.get(byKey(d.integrationKey, e.externalAccountId));
        if (c) app = c.app_id;
        else resolution.error ??= `no connection for ${d.integrationKey} account "${e.externalAccountId}": connect it, then requeue`;
      }
      if (app !== undefined) apps.add(app);
    }
    resolution.appId = apps.size === 1 ? [...apps][0]! : null;
    resolutions.set(d.deliveryId, resolution);
  }
  return { resolutions, resolved };
}

/**
 * Applies deliveries and announces what they changed, in the caller's transaction: every
 * delivery is resolved to its connections (see DeliveryResolution), and the events of each
 * delivery that resolved are applied, set-based, together with those of the others. A
 * delivery that did not resolve changes nothing. The one entry for a channel's events, the
 * webhook worker's and live chat's alike.
 */
export async function applyDeliveries(
  deps: Announcer,
  trx: Executor,
  deliveries: DeliveryEvents[],
  now: Date,
): Promise<Map<string, DeliveryResolution>> {
  const { resolutions, changes } = await applyDeliveriesUnannounced(deps, trx, deliveries, now);
  await announce(deps, trx, changes, now);
  return resolutions;
}

/**
 * applyDeliveries without the announcement: for a caller that completes what was applied
 * before it is told (live chat puts a visitor's uploads on the new message), then calls
 * `announce` with `changes` in the same transaction. Downloads of the attachments it wrote
 * `pending` are queued here, with the rest of the write.
 */
export async function applyDeliveriesUnannounced(deps: Announcer, trx: Executor, deliveries: DeliveryEvents[], now: Date) {
  const { resolutions, resolved } = await resolveConnections(trx, deliveries);
  const applicable = deliveries.filter((d) => !resolutions.get(d.deliveryId)!.error);
  const { changes, attachmentIds } = await applyEvents(trx, applicable, resolved, now);
  // The bytes are downloaded later, by the fetch-media worker, never inside this transaction.
  await enqueueFetchMedia(
    deps.boss,
    trx,
    attachmentIds.map((attachmentId) => ({ attachmentId, attempt: 1 })),
  );
  return { resolutions, changes };
}

/**
 * Applies the events of deliveries that resolved, set-based: one statement each for
 * contacts, threads, messages, their attachments and receipts however many deliveries the
 * batch holds. Returns what changed, in the order it is to be announced, and the attachments
 * written `pending`, to be downloaded.
 */
async function applyEvents(
  db: Executor,
  deliveries: DeliveryEvents[],
  resolved: Resolved,
  now: Date,
): Promise<{ changes: Change[]; attachmentIds: number[] }> {
  const { connections, sentMessages } = resolved;
  const deliveryOf = new Map<InboundEvent, string>();
  const inbound: { connection: ConnectionRef; event: Extract<NormalisedEvent, { type: 'message' }> }[] = [];
  const opened: { connection: ConnectionRef; event: Extract<NormalisedEvent, { type: 'conversation' }> }[] = [];
  const statuses = new Map<string, StatusInput>();
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.type === 'message') {
        inbound.push({ connection: connections.get(byKey(d.integrationKey, e.externalAccountId))!, event: e });
        deliveryOf.set(e, d.deliveryId);
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
      if (connectionId === undefined) continue; // a receipt for no known message: nothing to update
      const key = `${connectionId}|${e.externalMessageId}`;
      statuses.set(
        key,
        strongest(statuses.get(key), { connectionId, externalId: e.externalMessageId, status: e.status, error: e.error ?? null }),
      );
    }
  }

  const changes: Change[] = [];
  let attachmentIds: number[] = [];
  if (inbound.length > 0 || opened.length > 0) {
    const contacts = await upsertContacts(
      db,
      [...inbound, ...opened].map(({ connection, event }) => ({
        workspaceId: connection.workspace_id,
        integrationKey: connection.integration_key,
        externalId: event.contact.externalId,
        name: event.contact.name ?? null,
      })),
      now,
    );
    for (const c of contacts.created) changes.push({ type: 'contact.created', contact: { ...c, createdAt: now } });
    const contactOf = (c: ConnectionRef, externalId: string) => contacts.ids.get(`${c.workspace_id}|${c.integration_key}|${externalId}`)!;
    const at = (e: { occurredAt?: Date }) => e.occurredAt ?? now;
    // The same provider message twice in one batch (a provider's retry) is inserted once.
    const unique = new Map<string, (typeof inbound)[number]>();
    for (const item of inbound) unique.set(`${item.connection.id}|${item.event.externalMessageId}`, item);
    // An e-mail that answers a known message joins that message's thread (docs/webhooks.md).
    const joined = await threadsByReference(db, [...unique.values()], contactOf);
    const ownThread = (item: (typeof inbound)[number]) => !joined.has(item.event);
    const threads = await upsertThreads(
      db,
      [...[...unique.values()].filter(ownThread), ...opened].map(({ connection, event }) => ({
        workspaceId: connection.workspace_id,
        connectionId: connection.id,
        contactId: contactOf(connection, event.contact.externalId),
        lastMessageAt: at(event),
        preview: event.type === 'message' ? event.text.slice(0, PREVIEW_LENGTH) : null,
        unread: event.type === 'message' ? 1 : 0,
        lastInboundAt: event.type === 'message' ? at(event) : null,
      })),
      now,
    );
    const threadOf = (c: ConnectionRef, externalId: string) => threads.get(`${c.id}|${contactOf(c, externalId)}`)!;
    const threadIdOf = (item: (typeof inbound)[number]) =>
      joined.get(item.event) ?? threadOf(item.connection, item.event.contact.externalId).id;
    const inserted = await insertInboundMessages(
      db,
      [...unique.values()].map(({ connection, event }) => ({
        workspaceId: connection.workspace_id,
        threadId: threadIdOf({ connection, event }),
        connectionId: connection.id,
        externalId: event.externalMessageId,
        text: event.text,
        createdAt: at(event),
      })),
      now,
    );
    attachmentIds = await insertPendingAttachments(db, pendingAttachments(inserted, unique, deliveryOf), now);
    // Threads joined by reference move on as a contact's own do: last message, preview, unread.
    const touchedRows = await touchThreads(
      db,
      [...unique.values()].flatMap(({ event }) => {
        const threadId = joined.get(event);
        return threadId === undefined ? [] : [{ threadId, lastMessageAt: at(event), preview: event.text.slice(0, PREVIEW_LENGTH) }];
      }),
      now,
    );
    // Threads are announced as they are once this batch is done with them: the upsert's rows,
    // brought up to date below rather than read again, so the common batch costs no statement
    // more than the upsert and the insert.
    const views = new Map<number, ThreadView>();
    const integrationOf = new Map([...inbound, ...opened].map(({ connection }) => [connection.id, connection.integration_key]));
    for (const t of [...threads.values(), ...touchedRows]) views.set(t.id, { ...t, integration_key: integrationOf.get(t.connection_id)! });
    // A message the upsert counted as unread but the insert skipped (stored by an earlier delivery).
    const skipped = new Map<number, number>();
    for (const item of unique.values()) {
      const id = threadIdOf(item);
      skipped.set(id, (skipped.get(id) ?? 0) + 1);
    }
    for (const m of inserted) skipped.set(m.thread_id, skipped.get(m.thread_id)! - 1);
    const corrections = [...skipped].filter(([, n]) => n > 0).map(([threadId, n]) => ({ threadId, n }));
    await uncountUnread(db, corrections);
    for (const { threadId, n } of corrections) views.get(threadId)!.unread_count = Math.max(0, views.get(threadId)!.unread_count - n);

    // Reopening and automatic assignment (docs/conversations.md), in this batch's statements.
    const work = await workInboundThreads(
      db,
      {
        threads: [...threads.values(), ...touchedRows],
        withNewMessage: new Set(inserted.map((m) => m.thread_id)),
        newMessages: inserted,
        autoAssign: new Set(
          [...inbound, ...opened].filter(({ connection }) => connection.auto_assign).map(({ connection }) => connection.id),
        ),
      },
      now,
    );
    for (const id of work.reopened) Object.assign(views.get(id)!, { status: 'open', snoozed_until: null });
    for (const a of work.assigned) views.get(a.id)!.assignee_id = a.assignee_id;

    for (const t of threads.values()) if (t.created) changes.push({ type: 'thread.created', thread: views.get(t.id)! });
    const touched = new Set<number>();
    const updated = (threadId: number) => {
      if (touched.has(threadId)) return;
      touched.add(threadId);
      changes.push({ type: 'thread.updated', thread: views.get(threadId)! });
    };
    for (const { connection, event } of opened) updated(threadOf(connection, event.contact.externalId).id);
    for (const m of inserted) {
      changes.push({ type: 'message.created', message: m });
      updated(m.thread_id);
    }
    for (const m of work.activity) changes.push({ type: 'message.created', message: m });
    for (const n of work.notifications) changes.push({ type: 'notification.created', notification: n });
  }
  for (const m of await applyStatuses(db, [...statuses.values()], now)) changes.push({ type: 'message.updated', message: m });
  return { changes, attachmentIds };
}

type InboundEvent = Extract<NormalisedEvent, { type: 'message' }>;

/**
 * The attachments of the messages this batch inserted (a message stored by an earlier
 * delivery keeps the attachments it got then). A file inside the delivery names the delivery,
 * so the job can read it again from the stored raw body.
 */
function pendingAttachments(
  inserted: { id: number; connection_id: number | null; external_id: string | null; workspace_id: number }[],
  byMessage: Map<string, { event: InboundEvent }>,
  deliveryOf: Map<InboundEvent, string>,
): PendingAttachmentInput[] {
  return inserted.flatMap((m) => {
    const event = byMessage.get(`${m.connection_id}|${m.external_id}`)?.event;
    return (event?.attachments ?? []).map((a) => ({
      workspaceId: m.workspace_id,
      messageId: m.id,
      kind: a.kind,
      contentType: a.contentType,
      filename: a.filename,
      source: a.source.from === 'delivery' ? { ...a.source, deliveryId: deliveryOf.get(event!)! } : a.source,
    }));
  });
}

/**
 * The known thread each inbound message answers (e-mail threading): the thread of the first
 * of its `references` that is a message of the same connection and whose contact is the
 * sender. A Message-ID is no credential: anyone who saw one (a Cc, a forwarded mail) could
 * name it, and an agent would then answer a stranger's words in the customer's thread. Mail
 * whose references name no thread of its sender goes to the sender's own thread as usual.
 */
async function threadsByReference(
  db: Executor,
  inbound: { connection: ConnectionRef; event: InboundEvent }[],
  contactOf: (connection: ConnectionRef, externalId: string) => number,
) {
  const wanted = inbound.flatMap(({ connection, event }) =>
    (event.references ?? []).map((externalId) => ({ connectionId: connection.id, externalId })),
  );
  const joined = new Map<InboundEvent, number>();
  if (wanted.length === 0) return joined;
  const found = await findThreadsOfMessages(db, wanted);
  for (const { connection, event } of inbound) {
    const sender = contactOf(connection, event.contact.externalId);
    for (const ref of event.references ?? []) {
      const thread = found.get(`${connection.id}|${ref}`);
      if (thread?.contactId === sender) {
        joined.set(event, thread.threadId);
        break;
      }
    }
  }
  return joined;
}

/** Of two receipts for one message in one batch, the one that moves it furthest. */
function strongest(a: StatusInput | undefined, b: StatusInput): StatusInput {
  if (!a) return b;
  if (a.status === 'failed' || b.status === 'failed') {
    const other = a.status === 'failed' ? b : a;
    // `failed` only counts before delivery; a delivered or read receipt outranks it.
    return other.status === 'delivered' || other.status === 'read' ? other : a.status === 'failed' ? a : b;
  }
  return STATUS_RANK[b.status] > STATUS_RANK[a.status] ? b : a;
}
