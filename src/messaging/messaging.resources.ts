import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { type Attachment, AttachmentResource } from '../attachments/attachments.resources.js';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import type { ContactHandlesTable, ContactsTable, MessagesTable, ThreadsTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';

/** The API's shapes of what the workers make (docs/api.md), and their mappers. */

export const MESSAGE_STATUSES = ['received', 'queued', 'sent', 'delivered', 'read', 'failed'] as const;
export const THREAD_STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;

/** A thread as the API shows it: its row, its connection's integration and its contact's name. */
export type ThreadView = Selectable<ThreadsTable> & { integration_key: string; contact_name: string | null };

export const ThreadResource = Type.Object(
  {
    id: Type.Integer(),
    connectionId: Type.Integer(),
    integrationKey: Type.String(),
    contactId: Type.Integer(),
    contactName: Nullable(Type.String({ description: "the contact's name; null while the contact has none" })),
    status: StringEnum(THREAD_STATUSES),
    snoozedUntil: Nullable(Type.String({ format: 'date-time', description: 'when a snoozed thread opens again; null unless snoozed' })),
    assigneeId: Nullable(Type.Integer({ description: 'the user working the thread' })),
    labels: Type.Array(Type.String()),
    unreadCount: Type.Integer({ minimum: 0, description: 'inbound messages that arrived since agentLastSeenAt' }),
    agentLastSeenAt: Nullable(Type.String({ format: 'date-time', description: 'when an agent last read the thread' })),
    lastMessageAt: Timestamp,
    lastMessagePreview: Nullable(Type.String()),
    replyWindowEndsAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          "until when a free-form reply is accepted (the contact's last message + the channel's window); null for channels without a window",
      }),
    ),
    createdAt: Timestamp,
  },
  { title: 'Thread' },
);

export const MessageResource = Type.Object(
  {
    id: Type.Integer(),
    threadId: Type.Integer(),
    direction: StringEnum(['inbound', 'outbound']),
    externalId: Nullable(Type.String({ description: "the provider's message id" })),
    text: Type.String(),
    status: StringEnum(MESSAGE_STATUSES),
    error: Nullable(Type.String()),
    kind: StringEnum(['message', 'note', 'activity'], {
      description: 'note: written by an agent for colleagues; activity: written by the service',
    }),
    private: Type.Boolean({ description: 'true for notes and activity: never sent to the contact' }),
    authorId: Nullable(Type.Integer({ description: 'the user who wrote or caused it; null for contacts and API keys' })),
    attachments: Type.Array(AttachmentResource, { description: 'files the message carries, in the order they were added' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Message' },
);

export const ContactResource = Type.Object(
  {
    id: Type.Integer(),
    name: Nullable(Type.String()),
    handles: Type.Array(Type.Object({ integrationKey: Type.String(), externalId: Type.String() })),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    attributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
      description: 'a flat object set through PATCH /v1/contacts/:id',
    }),
    createdAt: Timestamp,
  },
  { title: 'Contact' },
);

export function threadResource(row: ThreadView): Static<typeof ThreadResource> {
  return {
    id: row.id,
    connectionId: row.connection_id,
    integrationKey: row.integration_key,
    contactId: row.contact_id,
    contactName: row.contact_name,
    status: row.status,
    snoozedUntil: row.snoozed_until?.toISOString() ?? null,
    assigneeId: row.assignee_id,
    labels: row.labels,
    unreadCount: row.unread_count,
    agentLastSeenAt: row.agent_last_seen_at?.toISOString() ?? null,
    lastMessageAt: row.last_message_at.toISOString(),
    lastMessagePreview: row.last_message_preview,
    replyWindowEndsAt: replyWindowEndsAt(row.integration_key, row.last_inbound_at)?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

/** `attachments` are the message's own, already shaped (see src/attachments/message-attachments.ts). */
export function messageResource(row: Selectable<MessagesTable>, attachments: Attachment[]): Static<typeof MessageResource> {
  return {
    id: row.id,
    threadId: row.thread_id,
    direction: row.direction,
    externalId: row.external_id,
    text: row.text,
    status: row.status,
    error: row.error,
    kind: row.kind,
    private: row.private,
    authorId: row.author_id,
    attachments,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function contactResource(
  row: Selectable<ContactsTable>,
  handles: Selectable<ContactHandlesTable>[],
): Static<typeof ContactResource> {
  return {
    id: row.id,
    name: row.name,
    handles: handles.filter((h) => h.contact_id === row.id).map((h) => ({ integrationKey: h.integration_key, externalId: h.external_id })),
    email: row.email,
    phone: row.phone,
    attributes: row.attributes,
    createdAt: row.created_at.toISOString(),
  };
}
