import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { type Attachment, AttachmentResource } from '../attachments/attachments.resources.js';
import type { EmailHeaders, MessagesTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';

/** The Message resource (docs/api.md) and its mapper; a thread's and a contact's live in their folders. */

export const MESSAGE_STATUSES = ['received', 'queued', 'sent', 'delivered', 'read', 'failed'] as const;

const MailAddressResource = Type.Object({ email: Type.String(), name: Type.Optional(Type.String()) });

/** Message.email (docs/email.md): the headers a reader of the mail sees. */
export const EmailResource = Type.Object(
  {
    messageId: Type.String(),
    inReplyTo: Nullable(Type.String()),
    from: MailAddressResource,
    to: Type.Array(MailAddressResource),
    cc: Type.Array(MailAddressResource),
    bcc: Type.Optional(Type.Array(MailAddressResource, { description: 'outbound only' })),
    subject: Nullable(Type.String()),
  },
  { description: 'e-mail only' },
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
    ai: Type.Optional(Type.Literal(true, { description: "present on a note the workspace's model wrote (a summary, docs/ai.md)" })),
    automation: Type.Optional(
      Type.Literal(true, {
        description: 'present on a reply or note the service wrote on its own: an automation rule, an away message, a CSAT survey',
      }),
    ),
    mentions: Type.Optional(
      Type.Array(Type.Integer(), { description: 'notes only: the users the note names, each told by a `mentioned` notification' }),
    ),
    email: Type.Optional(EmailResource),
    html: Type.Optional(
      Nullable(
        Type.String({
          description:
            "e-mail only: the HTML part, sanitized (an allowlist; no script; remote images as `data-remote-src`, shown only on the agent's click; the mail's own `cid:` images as `data-cid`, shown by the frame; links rel=noopener)",
        }),
      ),
    ),
    quotedText: Type.Optional(Nullable(Type.String({ description: 'e-mail only: the quoted history and signature cut from `text`' }))),
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
    ...(row.ai ? { ai: true as const } : {}),
    ...(row.automation ? { automation: true as const } : {}),
    ...(row.kind === 'note' ? { mentions: row.mentions ?? [] } : {}),
    ...(row.email ? { email: emailHeaders(row.email), html: row.html, quotedText: row.quoted_text } : {}),
    attachments,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The stored headers as the resource shows them (References stay inside: replies read them). */
function emailHeaders(e: EmailHeaders): Static<typeof EmailResource> {
  return {
    messageId: e.messageId,
    inReplyTo: e.inReplyTo,
    from: e.from,
    to: e.to,
    cc: e.cc,
    ...(e.bcc ? { bcc: e.bcc } : {}),
    subject: e.subject,
  };
}
