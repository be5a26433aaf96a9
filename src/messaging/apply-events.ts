import type { Executor } from '../db/database.js';
import type { RealtimeEvent } from '../realtime/publish.js';
import type { NormalisedEvent, OutboundEvent } from './events.js';
import { messageResource, threadResource } from './messaging.resources.js';
import {
  applyStatuses,
  findConnectionsByAccount,
  findOutboundByExternalId,
  insertInboundMessages,
  upsertContacts,
  upsertThreads,
  type ConnectionRef,
  type StatusInput,
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
   * delivery then fails (so that app's admin can see and requeue it, DESIGN). A body whose
   * events resolve to connections of several apps belongs to none: its row (raw body and all)
   * is shown to the operator only, never to a tenant whose events happen to be in it.
   */
  appId: string | null;
  /** Why the delivery cannot be applied, when it cannot. */
  error?: string;
}

const PREVIEW_LENGTH = 140;
const STATUS_RANK = { sent: 1, delivered: 2, read: 3 } as const;

/**
 * Resolves every delivery's account to a connection. A delivery naming an account that no
 * workspace has connected cannot be applied; it fails like any processing error, so it can be
 * requeued once the account is connected. An unsigned SMS report (account '') resolves through
 * the message it names instead and can never claim an account.
 */
export async function resolveConnections(db: Executor, deliveries: DeliveryEvents[]) {
  const wanted = new Map<string, { integrationKey: string; externalAccountId: string }>();
  const unsignedIds: string[] = [];
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.externalAccountId === '' && e.type === 'status') unsignedIds.push(e.externalMessageId);
      else wanted.set(`${d.integrationKey}|${e.externalAccountId}`, { integrationKey: d.integrationKey, externalAccountId: e.externalAccountId });
    }
  }
  const connections = new Map<string, ConnectionRef>();
  for (const c of await findConnectionsByAccount(db, [...wanted.values()])) connections.set(`${c.integration_key}|${c.external_account_id}`, c);
  const bySentMessage = new Map<string, { connectionId: number; appId: string }>();
  for (const m of await findOutboundByExternalId(db, 'sms', unsignedIds)) bySentMessage.set(m.external_id, { connectionId: m.connection_id, appId: m.app_id });

  const resolutions = new Map<string, DeliveryResolution>();
  for (const d of deliveries) {
    const resolution: DeliveryResolution = { appId: null };
    const apps = new Set<string>();
    for (const e of d.events) {
      let app: string | undefined;
      if (e.externalAccountId === '' && e.type === 'status') {
        // An unsigned SMS report belongs to the app of the message it names.
        app = bySentMessage.get(e.externalMessageId)?.appId;
      } else {
        const c = connections.get(`${d.integrationKey}|${e.externalAccountId}`);
        if (c) app = c.app_id;
        else resolution.error ??= `no connection for ${d.integrationKey} account "${e.externalAccountId}": connect it, then requeue`;
      }
      if (app !== undefined) apps.add(app);
    }
    resolution.appId = apps.size === 1 ? [...apps][0]! : null;
    resolutions.set(d.deliveryId, resolution);
  }
  return { resolutions, connections, bySentMessage };
}

/** What applying events changed, to announce in the same transaction. */
export interface Applied {
  /** For agents' sockets: small, ids and the few fields a UI needs. */
  realtime: RealtimeEvent[];
  /** For customers' webhook endpoints: whole resources. */
  outbound: OutboundEvent[];
}

/**
 * Applies the events of deliveries that resolved, set-based: one statement each for
 * contacts, threads, messages and receipts however many deliveries the batch holds.
 * Returns the realtime and outbound events to publish in the same transaction.
 */
export async function applyEvents(
  db: Executor,
  deliveries: DeliveryEvents[],
  connections: Map<string, ConnectionRef>,
  bySentMessage: Map<string, { connectionId: number; appId: string }>,
  now: Date,
): Promise<Applied> {
  const inbound: { connection: ConnectionRef; event: Extract<NormalisedEvent, { type: 'message' }> }[] = [];
  const opened: { connection: ConnectionRef; event: Extract<NormalisedEvent, { type: 'conversation' }> }[] = [];
  const statuses = new Map<string, StatusInput>();
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.type === 'message') {
        inbound.push({ connection: connections.get(`${d.integrationKey}|${e.externalAccountId}`)!, event: e });
        continue;
      }
      if (e.type === 'conversation') {
        opened.push({ connection: connections.get(`${d.integrationKey}|${e.externalAccountId}`)!, event: e });
        continue;
      }
      const connectionId = e.externalAccountId === ''
        ? bySentMessage.get(e.externalMessageId)?.connectionId
        : connections.get(`${d.integrationKey}|${e.externalAccountId}`)?.id;
      if (connectionId === undefined) continue; // an unsigned report for no known message: nothing to update
      const key = `${connectionId}|${e.externalMessageId}`;
      statuses.set(key, strongest(statuses.get(key), { connectionId, externalId: e.externalMessageId, status: e.status, error: e.error ?? null }));
    }
  }

  const realtime: RealtimeEvent[] = [];
  const outbound: OutboundEvent[] = [];
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
    for (const c of contacts.created) {
      outbound.push({
        type: 'contact.created',
        workspaceId: c.workspaceId,
        data: { id: c.id, name: c.name, handles: [{ integrationKey: c.integrationKey, externalId: c.externalId }], createdAt: now.toISOString() },
      });
    }
    const contactOf = (c: ConnectionRef, externalId: string) => contacts.ids.get(`${c.workspace_id}|${c.integration_key}|${externalId}`)!;
    const at = (e: { occurredAt?: Date }) => e.occurredAt ?? now;
    const threads = await upsertThreads(
      db,
      [...inbound, ...opened].map(({ connection, event }) => ({
        workspaceId: connection.workspace_id,
        connectionId: connection.id,
        contactId: contactOf(connection, event.contact.externalId),
        lastMessageAt: at(event),
        preview: event.type === 'message' ? event.text.slice(0, PREVIEW_LENGTH) : null,
      })),
      now,
    );
    const integrationOf = new Map([...inbound, ...opened].map(({ connection }) => [connection.id, connection.integration_key]));
    for (const t of threads.values()) {
      if (t.created) outbound.push({ type: 'thread.created', workspaceId: t.workspace_id, data: threadResource({ ...t, integration_key: integrationOf.get(t.connection_id)! }) });
    }
    // The same provider message twice in one batch (a provider's retry) is inserted once.
    const unique = new Map<string, (typeof inbound)[number]>();
    for (const item of inbound) unique.set(`${item.connection.id}|${item.event.externalMessageId}`, item);
    const inserted = await insertInboundMessages(
      db,
      [...unique.values()].map(({ connection, event }) => ({
        workspaceId: connection.workspace_id,
        threadId: threads.get(`${connection.id}|${contactOf(connection, event.contact.externalId)}`)!.id,
        connectionId: connection.id,
        externalId: event.externalMessageId,
        text: event.text,
        createdAt: at(event),
      })),
      now,
    );
    const touched = new Set<number>();
    for (const { connection, event } of opened) {
      const thread = threads.get(`${connection.id}|${contactOf(connection, event.contact.externalId)}`)!;
      if (!touched.has(thread.id)) {
        touched.add(thread.id);
        realtime.push({ type: 'thread.updated', workspaceId: thread.workspace_id, data: { id: thread.id } });
      }
    }
    for (const m of inserted) {
      realtime.push({
        type: 'message.created',
        workspaceId: m.workspace_id,
        data: { id: m.id, threadId: m.thread_id, direction: 'inbound', status: 'received', preview: m.text.slice(0, PREVIEW_LENGTH) },
      });
      outbound.push({ type: 'message.created', workspaceId: m.workspace_id, data: messageResource(m) });
      if (!touched.has(m.thread_id)) {
        touched.add(m.thread_id);
        realtime.push({ type: 'thread.updated', workspaceId: m.workspace_id, data: { id: m.thread_id } });
      }
    }
  }
  for (const m of await applyStatuses(db, [...statuses.values()], now)) {
    realtime.push({ type: 'message.updated', workspaceId: m.workspace_id, data: { id: m.id, threadId: m.thread_id, status: m.status, error: m.error } });
    outbound.push({ type: 'message.updated', workspaceId: m.workspace_id, data: messageResource(m) });
  }
  return { realtime, outbound };
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
