import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { type Attachment, AttachmentResource } from '../attachments/attachments.resources.js';
import type { MessagesTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';

/** The Message resource (docs/api.md) and its mapper; a thread's and a contact's live in their folders. */

export const MESSAGE_STATUSES = ['received', 'queued', 'sent', 'delivered', 'read', 'failed'] as const;

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
    mentions: Type.Optional(
      Type.Array(Type.Integer(), { description: 'notes only: the users the note names, each told by a `mentioned` notification' }),
    ),
    attachments: Type.Array(AttachmentResource, { description: 'files the message carries, in the order they were added' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Message' },
);

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
    ...(row.kind === 'note' ? { mentions: row.mentions ?? [] } : {}),
    attachments,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
