import EmailReplyParser from 'email-reply-parser';
import type { InboundAttachment, NormalisedEvent } from '../messaging/events.js';
import { kindOfType } from './media-placeholder.js';

/**
 * What the e-mail integrations (`email`, `email.postmark`, `email.mailgun`) share about an
 * inbound mail: one message event whose text is the subject, a blank line and the visible
 * reply, with the ids it answers so it can join a known thread (docs/webhooks.md, "E-mail
 * threading"). The delivery's raw body (kept in the inbox row) still holds the whole mail.
 */
export interface InboundMail {
  /** The receiving address: the connection's account. */
  to: string;
  /** The Message-ID (or the provider's id when the mail has none). */
  messageId: string;
  from: { email: string; name?: string };
  subject?: string;
  /** The plain-text body as received, quoted history and signature included. */
  body: string;
  /** The raw In-Reply-To and References header values, when present. */
  inReplyTo?: string;
  references?: string;
  /** The mail's files, in the delivery's order: the `index`-th is read again from the stored delivery. */
  attachments?: { filename?: string; contentType?: string }[];
  occurredAt?: Date;
}

export function inboundMailEvent(mail: InboundMail): Extract<NormalisedEvent, { type: 'message' }> {
  const visible = visibleReply(mail.body);
  const attachments = (mail.attachments ?? []).map(deliveryAttachment);
  const references = threadReferences(mail.inReplyTo, mail.references);
  const subject = mail.subject?.trim();
  return {
    type: 'message',
    externalAccountId: mail.to.trim().toLowerCase(),
    externalMessageId: mail.messageId.trim(),
    contact: { externalId: mail.from.email.trim().toLowerCase(), ...(mail.from.name ? { name: mail.from.name } : {}) },
    // The subject leads, as the e-mail channel's sender reads it back for `Re:` (replies).
    text: subject ? `${subject}\n\n${visible}` : visible,
    occurredAt: mail.occurredAt,
    ...(references.length > 0 ? { references } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
  };
}

/** A file inside the delivery (docs/attachments.md): read again from the stored body by its index. */
function deliveryAttachment(a: { filename?: string; contentType?: string }, index: number): InboundAttachment {
  return {
    kind: kindOfType(a.contentType),
    ...(a.contentType ? { contentType: a.contentType } : {}),
    ...(a.filename ? { filename: a.filename } : {}),
    source: { from: 'delivery', index },
  };
}

/**
 * The reply the sender wrote, without the quoted history and the signature below it, by
 * `email-reply-parser` (a maintained port of GitHub's reply parser), not by our own patterns.
 * A mail that is nothing but quotation (a bare forward) keeps its whole text: an empty message
 * would tell the agent nothing.
 */
export function visibleReply(body: string): string {
  const text = body.replace(/\r\n?/g, '\n');
  const visible = new EmailReplyParser().parseReply(text).trim();
  return visible === '' ? text.trim() : visible;
}

/** `<a@x> <b@y>` → message ids as written, angle brackets included. */
function messageIds(value: string | undefined): string[] {
  if (!value) return [];
  const bracketed = value.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  return value.split(/[\s,]+/).filter((s) => s !== '');
}

/**
 * In-Reply-To, then References from the nearest (last) to the first, each once, each in both
 * of its written forms (see messageIdForms) so a lookup finds it however it was stored.
 */
export function threadReferences(inReplyTo: string | undefined, references: string | undefined): string[] {
  const ids = [...new Set([...messageIds(inReplyTo), ...messageIds(references).reverse()])].slice(0, MAX_REFERENCES);
  return [...new Set(ids.flatMap(messageIdForms))];
}

/** A long References chain names the thread's start many times over; the nearest ids are enough. */
const MAX_REFERENCES = 20;

/** The id with and without its angle brackets: providers and SMTP libraries write either form. */
export function messageIdForms(id: string): string[] {
  const bare = id.replace(/^<(.*)>$/, '$1');
  return bare === id ? [id, `<${id}>`] : [id, bare];
}
