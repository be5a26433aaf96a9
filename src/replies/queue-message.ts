import type { PgBoss } from 'pg-boss';
import { linkAttachments } from '../attachments/reply-attachments.queries.js';
import type { Executor } from '../db/database.js';
import type { EmailHeaders } from '../db/types.js';
import { threadPreview } from '../messaging/announcements.js';
import { insertReply } from './replies.queries.js';
import { lockUnusedAttachments } from './reply-attachments.js';
import { enqueueSend } from './send-message.enqueue.js';

export interface OutboundMessage {
  workspaceId: number;
  threadId: number;
  connectionId: number;
  /** The text the contact reads (a template's rendered body), empty for files alone. */
  text: string;
  /** A template reply: the `template` object WhatsApp is sent. */
  template?: unknown;
  /** Uploads to send with it, checked and locked here. */
  attachmentIds: number[];
  /** The user writing; null for an API key and for the service. */
  authorId: number | null;
  /** The service writes it on its own: a rule's reply, an away message, a CSAT survey. */
  automation?: boolean;
  /** A reply on an e-mail thread: the mail's headers, decided now so a retry sends the same mail. */
  email?: EmailHeaders;
}

/**
 * Writes a message to the contact `queued`, puts the named uploads on it and queues its send,
 * all in the caller's transaction: a reply and a new conversation's first message alike. The
 * caller announces it. With the message, in its transaction, the files are linked, so an
 * Idempotency-Key replay finds them on it.
 */
export async function queueMessage(boss: PgBoss, trx: Executor, message: OutboundMessage, now: Date) {
  const files = await lockUnusedAttachments(trx, message.workspaceId, message.attachmentIds);
  const row = await insertReply(
    trx,
    {
      workspaceId: message.workspaceId,
      threadId: message.threadId,
      connectionId: message.connectionId,
      text: message.text,
      preview: threadPreview(
        message.text,
        files.map((f) => f.kind),
      ),
      authorId: message.authorId,
      automation: message.automation,
      template: message.template,
      email: message.email,
    },
    now,
  );
  await linkAttachments(trx, message.attachmentIds, row.id, now);
  await enqueueSend(boss, trx, { messageId: row.id, attempt: 1 });
  return row;
}
