import type { Selectable } from 'kysely';
import type { Attachment } from '../attachments/attachments.resources.js';
import type { MessagesTable } from '../db/types.js';
import { type NotificationRow, notificationResource } from '../notifications/notifications.resources.js';
import type { RealtimeEvent, ThreadPlace } from '../realtime/publish.js';
import { truncate } from '../text/truncate.js';
import { type ThreadView, threadResource } from '../threads/threads.resources.js';
import { messageResource } from './messaging.resources.js';

/**
 * Every change messaging announces, and what each one tells whom: agents' sockets (the realtime
 * bus: small, ids and the few fields a UI needs) and customers' webhook endpoints (whole API
 * resources). Announcing a new kind of change is one entry in CHANGE_EVENTS below (and, when
 * endpoints may subscribe to it, its name in ENDPOINT_CHANGE_TYPES). Pure: `announce` in
 * ./announce.ts publishes what `announcements` returns.
 */

/** The longest message text an event or a thread's preview carries. */
export const PREVIEW_LENGTH = 140;

/**
 * A thread's preview of a message, a contact's or a reply: its text, or `[image]`, `[audio]`,
 * `[file]`… when it has none (a photo, a voice note), cut to PREVIEW_LENGTH.
 */
export function threadPreview(text: string, kinds: readonly string[]): string {
  return truncate(text !== '' ? text : kinds.map((k) => `[${k}]`).join(' '), PREVIEW_LENGTH);
}

export type MessageRow = Selectable<MessagesTable>;
export interface NewContact {
  id: number;
  workspaceId: number;
  name: string | null;
  integrationKey: string;
  externalId: string;
  createdAt: Date;
}

export type Change =
  | { type: 'message.created'; message: MessageRow }
  | { type: 'message.updated'; message: MessageRow }
  | { type: 'thread.created'; thread: ThreadView }
  /**
   * A thread changed: a message in it, a conversation opened, its status, assignee, labels or
   * read marker. Carries the thread as it is after the change.
   */
  | {
      type: 'thread.updated';
      thread: ThreadView;
      /** Where the thread was, when the change moved it (its team or assignee): see RealtimeEvent. */
      formerly?: ThreadPlace;
    }
  /** A thread's SLA target passed 80 % of its time, or its due time (docs/sla.md): the thread as it is. */
  | { type: 'sla.warning'; thread: ThreadView }
  | { type: 'sla.breached'; thread: ThreadView }
  | { type: 'contact.created'; contact: NewContact }
  /** `contact` is the Contact resource as the API shows it. */
  | { type: 'contact.updated'; workspaceId: number; contact: object }
  | { type: 'contact.merged'; workspaceId: number; contact: object; mergedContactId: number }
  /** The person's data is gone (docs/privacy.md); only the id is told. */
  | { type: 'contact.erased'; workspaceId: number; contactId: number }
  /** Told only to the sockets of the user it is for; never to endpoints. */
  | { type: 'notification.created'; notification: NotificationRow }
  /** A contact rated a conversation, or changed the rating (docs/reports.md, "CSAT"). */
  | { type: 'csat.received'; workspaceId: number; csat: CsatReceived };

/** `data` of `csat.received`, to sockets and endpoints alike. */
export interface CsatReceived {
  threadId: number;
  rating: number;
  comment: string | null;
  contactId: number;
  assigneeId: number | null;
}

/** The changes customers' endpoints may subscribe to (webhook_inbox.dead_lettered is the inbox's own). */
export const ENDPOINT_CHANGE_TYPES = [
  'message.created',
  'message.updated',
  'thread.created',
  'thread.updated',
  'contact.created',
  'contact.updated',
  'contact.merged',
  'contact.erased',
  'sla.warning',
  'sla.breached',
  'csat.received',
] as const;
type EndpointChangeType = (typeof ENDPOINT_CHANGE_TYPES)[number];

/**
 * The events customers receive on their webhook endpoints. The body sent is
 * `{ id, type, createdAt, workspaceId, data }`; `data` is the API's own resource (Message,
 * Thread, Contact, the inbox row without its body), so a receiver reads the same shapes as the
 * /v1 lists. `ping` is sent only by an endpoint's `test` route, whatever its event filter.
 */
export type OutboundEventType = EndpointChangeType | 'webhook_inbox.dead_lettered' | 'ping';

export interface OutboundEvent {
  type: OutboundEventType;
  workspaceId: number;
  data: object;
}

/** The attachments of the messages the changes name, by message id, already shaped. */
export type AttachmentsByMessage = ReadonlyMap<number, Attachment[]>;

/**
 * What a shape reads besides the change: the messages' attachments, and each thread's resource
 * made once per announcement (a thread.updated tells agents and endpoints the same resource).
 */
interface ShapeContext {
  attachments: AttachmentsByMessage;
  thread(view: ThreadView): ReturnType<typeof threadResource>;
}

type Shape<C extends Change> = {
  workspaceId(change: C): number;
  /** The one user whose sockets are told; absent: every socket of the workspace. */
  targetUserId?(change: C): number;
  /** `data` of the realtime event; absent: agents are not told. */
  realtime?(change: C, ctx: ShapeContext): Record<string, unknown>;
  /** Where the thread was before the change moved it, for the hub only. */
  formerly?(change: C): ThreadPlace | undefined;
} & (C['type'] extends EndpointChangeType
  ? { /** `data` of the outbound event. */ endpoints(change: C, ctx: ShapeContext): object }
  : { endpoints?: never });

interface AnyShape {
  workspaceId(change: Change): number;
  targetUserId?(change: Change): number;
  realtime?(change: Change, ctx: ShapeContext): Record<string, unknown>;
  formerly?(change: Change): ThreadPlace | undefined;
  endpoints?(change: Change, ctx: ShapeContext): object;
}

const attachmentsOf = (m: MessageRow, all: AttachmentsByMessage) => all.get(m.id) ?? [];
/**
 * What agents' sockets are told of a message's attachments: ids, kinds and states, enough to
 * show a placeholder and refetch. Names and links stay out, so a message with many files
 * still fits one NOTIFY (and one that does not is cut to ids by the publisher).
 */
const realtimeAttachments = (m: MessageRow, all: AttachmentsByMessage) =>
  attachmentsOf(m, all).map((a) => ({ id: a.id, kind: a.kind, contentType: a.contentType, status: a.status }));

const CHANGE_EVENTS: { [T in Change['type']]: Shape<Extract<Change, { type: T }>> } = {
  'message.created': {
    workspaceId: (c) => c.message.workspace_id,
    realtime: ({ message: m }, { attachments }) => ({
      id: m.id,
      threadId: m.thread_id,
      direction: m.direction,
      kind: m.kind,
      private: m.private,
      status: m.status,
      // What the thread's list shows for it: a message of files alone names their kinds.
      preview: threadPreview(m.text, m.text === '' ? attachmentsOf(m, attachments).map((a) => a.kind) : []),
      attachments: realtimeAttachments(m, attachments),
    }),
    endpoints: (c, { attachments }) => messageResource(c.message, attachmentsOf(c.message, attachments)),
  },
  'message.updated': {
    workspaceId: (c) => c.message.workspace_id,
    realtime: ({ message: m }, { attachments }) => ({
      id: m.id,
      threadId: m.thread_id,
      status: m.status,
      error: m.error,
      attachments: realtimeAttachments(m, attachments),
    }),
    endpoints: (c, { attachments }) => messageResource(c.message, attachmentsOf(c.message, attachments)),
  },
  'thread.created': {
    workspaceId: (c) => c.thread.workspace_id,
    endpoints: (c, ctx) => ctx.thread(c.thread),
  },
  'thread.updated': {
    workspaceId: (c) => c.thread.workspace_id,
    realtime: (c, ctx) => ctx.thread(c.thread),
    formerly: (c) => c.formerly,
    endpoints: (c, ctx) => ctx.thread(c.thread),
  },
  'sla.warning': {
    workspaceId: (c) => c.thread.workspace_id,
    realtime: (c, ctx) => ctx.thread(c.thread),
    endpoints: (c, ctx) => ctx.thread(c.thread),
  },
  'sla.breached': {
    workspaceId: (c) => c.thread.workspace_id,
    realtime: (c, ctx) => ctx.thread(c.thread),
    endpoints: (c, ctx) => ctx.thread(c.thread),
  },
  'contact.created': {
    workspaceId: (c) => c.contact.workspaceId,
    endpoints: ({ contact: c }) => ({
      id: c.id,
      name: c.name,
      email: null,
      phone: null,
      attributes: {},
      handles: [{ integrationKey: c.integrationKey, externalId: c.externalId }],
      createdAt: c.createdAt.toISOString(),
    }),
  },
  'contact.updated': {
    workspaceId: (c) => c.workspaceId,
    realtime: (c) => ({ ...c.contact }),
    endpoints: (c) => c.contact,
  },
  'contact.merged': {
    workspaceId: (c) => c.workspaceId,
    realtime: (c) => ({ contact: c.contact, mergedContactId: c.mergedContactId }),
    endpoints: (c) => ({ contact: c.contact, mergedContactId: c.mergedContactId }),
  },
  'contact.erased': {
    workspaceId: (c) => c.workspaceId,
    realtime: (c) => ({ contactId: c.contactId }),
    endpoints: (c) => ({ contactId: c.contactId }),
  },
  'csat.received': {
    workspaceId: (c) => c.workspaceId,
    realtime: (c) => ({ ...c.csat }),
    endpoints: (c) => c.csat,
  },
  'notification.created': {
    workspaceId: (c) => c.notification.workspace_id,
    targetUserId: (c) => c.notification.user_id,
    realtime: (c) => notificationResource(c.notification),
  },
};

/**
 * The realtime and outbound events of `changes`, each list in the order of the changes.
 * `attachments` holds those of the messages the changes name (see messageIdsOf). Every change
 * endpoints can take makes its outbound event, endpoint or not: the event log keeps them all.
 */
export function announcements(
  changes: readonly Change[],
  attachments: AttachmentsByMessage,
): { realtime: RealtimeEvent[]; outbound: OutboundEvent[] } {
  const realtime: RealtimeEvent[] = [];
  const outbound: OutboundEvent[] = [];
  const threads = new Map<ThreadView, ReturnType<typeof threadResource>>();
  const ctx: ShapeContext = {
    attachments,
    thread(view) {
      let resource = threads.get(view);
      if (!resource) {
        resource = threadResource(view);
        threads.set(view, resource);
      }
      return resource;
    },
  };
  for (const change of changes) {
    // The table's type pairs each change with its own entry; TypeScript cannot follow that
    // through a union, so the entry is read here as one taking any change.
    const shape = CHANGE_EVENTS[change.type] as unknown as AnyShape;
    const workspaceId = shape.workspaceId(change);
    if (shape.realtime) {
      const event: RealtimeEvent = { type: change.type, workspaceId, data: shape.realtime(change, ctx) };
      if (shape.targetUserId) event.targetUserId = shape.targetUserId(change);
      const formerly = shape.formerly?.(change);
      if (formerly) event.formerly = formerly;
      realtime.push(event);
    }
    if (shape.endpoints) outbound.push({ type: change.type as EndpointChangeType, workspaceId, data: shape.endpoints(change, ctx) });
  }
  return { realtime, outbound };
}

/** The workspace a change belongs to. */
export function workspaceIdOf(change: Change): number {
  return (CHANGE_EVENTS[change.type] as unknown as AnyShape).workspaceId(change);
}

/** The messages `changes` name: whose attachments `announcements` needs. */
export function messageIdsOf(changes: readonly Change[]): number[] {
  // A loop, not flatMap: an array for each change of a batch was garbage at once.
  const ids: number[] = [];
  for (const c of changes) if (c.type === 'message.created' || c.type === 'message.updated') ids.push(c.message.id);
  return ids;
}
