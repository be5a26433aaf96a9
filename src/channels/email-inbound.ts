import EmailReplyParser from 'email-reply-parser';
import type { IntegrationKey } from '../config.js';
import type { InboundAttachment, MailAddress, NormalisedEvent } from '../messaging/events.js';
import { decodeEncodedWords } from '../text/encoded-words.js';
import { isSingleMailbox } from '../text/mailbox.js';
import { NormaliseError } from './channel.js';
import { cleanContentId, htmlToText, sanitizeMailHtml } from './email-html.js';
import { kindOfType } from './media-placeholder.js';

/** The integrations whose messages are e-mail: threaded per conversation, answered with a subject. */
export const EMAIL_INTEGRATION_KEYS: readonly IntegrationKey[] = ['email', 'email.postmark', 'email.mailgun', 'email.imap'];

export function isEmailIntegration(key: string): boolean {
  return (EMAIL_INTEGRATION_KEYS as readonly string[]).includes(key);
}

/**
 * What the e-mail integrations (`email`, `email.postmark`, `email.mailgun`) share about an
 * inbound mail: one message event whose text is the visible reply (the quoted history and
 * signature go to `quotedText`), with its headers (`email`), its sanitized HTML, and the ids
 * it answers so it can join the conversation they belong to (docs/email.md, "Threads"). The
 * delivery's raw body (kept in the inbox row) still holds the whole mail.
 */
export interface InboundMail {
  /** The receiving address: the connection's account. */
  to: string;
  /** The Message-ID (or the provider's id when the mail has none). */
  messageId: string;
  from: { email: string; name?: string };
  /** Every address the mail was sent to, and its copies (default: `to` alone, none). */
  toList?: MailAddress[];
  cc?: MailAddress[];
  subject?: string;
  /** The plain-text body as received, quoted history and signature included. */
  body: string;
  /** The HTML part as received, when the mail has one; sanitized here. */
  html?: string;
  /** The raw In-Reply-To and References header values, when present. */
  inReplyTo?: string;
  references?: string;
  /** The mail's files, in the delivery's order: the `index`-th is read again from the stored delivery. */
  attachments?: { filename?: string; contentType?: string; contentId?: string }[];
  occurredAt?: Date;
  /** Sent by a machine, by its headers (see automaticMail); a bounce's sender is also seen here. */
  automatic?: boolean;
  /** A delivery report's returned mail and reason (NormalisedEvent's `bounceOf`). */
  bounceOf?: { externalMessageId: string; error: string; recipient?: string };
}

/**
 * Whether a mail was sent by a machine, not a person (RFC 3834 and what mail servers write):
 * an auto-reply (`Auto-Submitted` other than `no`, `X-Autoreply`, `X-Autorespond`,
 * `Precedence: auto_reply`), a list's or a bulk sender's mail (`List-Id`, `Precedence: bulk`,
 * `list` or `junk`) or a delivery report (`multipart/report`). The service answers none of
 * them with an away message: two auto-responders would answer each other.
 */
export function automaticMail(header: (name: string) => string | undefined): boolean {
  const autoSubmitted = header('auto-submitted')?.trim().toLowerCase();
  if (autoSubmitted !== undefined && autoSubmitted !== '' && !autoSubmitted.startsWith('no')) return true;
  if (header('x-autoreply') !== undefined || header('x-autorespond') !== undefined || header('list-id') !== undefined) return true;
  const precedence = header('precedence')?.trim().toLowerCase();
  if (precedence === 'bulk' || precedence === 'list' || precedence === 'junk' || precedence === 'auto_reply') return true;
  return /^\s*multipart\/report\b/i.test(header('content-type') ?? '');
}

/** A mail server's own address (bounces, delivery reports): `mailer-daemon@…`, `postmaster@…`. */
const SYSTEM_SENDER = /^(mailer-daemon|postmaster)@/i;

export function inboundMailEvent(mail: InboundMail): Extract<NormalisedEvent, { type: 'message' }> {
  const html = mail.html ? sanitizeMailHtml(mail.html) : undefined;
  const body = mail.body.trim() === '' && mail.html ? htmlToText(mail.html) : mail.body;
  const { visible, quoted } = splitReply(body);
  const attachments = (mail.attachments ?? []).map(deliveryAttachment);
  const references = threadReferences(mail.inReplyTo, mail.references);
  // Providers that hand over headers as written leave RFC 2047 encoded words in them.
  const subject = mail.subject === undefined ? undefined : decodeEncodedWords(mail.subject).trim();
  const messageId = mail.messageId.trim();
  const fromName = mail.from.name ? decodeEncodedWords(mail.from.name).trim() : undefined;
  const from = { email: mail.from.email.trim().toLowerCase(), ...(fromName ? { name: fromName } : {}) };
  // The sender's address is the contact's handle and so the To of every reply: a list or a
  // line break in it would send the agents' answers to whoever it names.
  if (!isSingleMailbox(from.email)) throw new NormaliseError('from.email is not one e-mail address');
  const account = mail.to.trim().toLowerCase();
  // A mail from the mailbox's own address is the service's mail come back (a loop): answering
  // it would write to itself.
  const automatic = mail.automatic === true || SYSTEM_SENDER.test(from.email) || from.email === account;
  return {
    type: 'message',
    externalAccountId: account,
    externalMessageId: messageId,
    contact: { externalId: from.email, ...(fromName ? { name: fromName } : {}) },
    text: visible,
    occurredAt: mail.occurredAt,
    email: {
      messageId,
      inReplyTo: messageIds(mail.inReplyTo)[0] ?? null,
      from,
      to: mail.toList?.length ? mail.toList.map(decodedName) : [{ email: account }],
      cc: (mail.cc ?? []).map(decodedName),
      subject: subject || null,
      references: messageIds(mail.references).slice(-MAX_REFERENCES),
      ...(automatic ? { automatic: true as const } : {}),
    },
    ...(html ? { html } : {}),
    ...(quoted ? { quotedText: quoted } : {}),
    ...(references.length > 0 ? { references } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(mail.bounceOf ? { bounceOf: mail.bounceOf } : {}),
  };
}

/** An address with its display name's encoded words decoded. */
function decodedName(a: MailAddress): MailAddress {
  const name = a.name ? decodeEncodedWords(a.name).trim() : undefined;
  return { email: a.email, ...(name ? { name } : {}) };
}

/** A file inside the delivery (docs/attachments.md): read again from the stored body by its index. */
function deliveryAttachment(a: { filename?: string; contentType?: string; contentId?: string }, index: number): InboundAttachment {
  const cid = cleanContentId(a.contentId);
  return {
    kind: kindOfType(a.contentType),
    ...(a.contentType ? { contentType: a.contentType } : {}),
    ...(a.filename ? { filename: a.filename } : {}),
    source: { from: 'delivery', index, ...(cid ? { cid } : {}) },
  };
}

/**
 * The reply the sender wrote, without the quoted history and the signature below it, by
 * `email-reply-parser` (a maintained port of GitHub's reply parser), not by our own patterns.
 * A mail that is nothing but quotation (a bare forward) keeps its whole text: an empty message
 * would tell the agent nothing.
 */
export function visibleReply(body: string): string {
  return splitReply(body).visible;
}

/** The visible reply and what was cut from it (quoted history, signature), by the same parser. */
export function splitReply(body: string): { visible: string; quoted?: string } {
  const text = body.replace(/\r\n?/g, '\n');
  const parsed = new EmailReplyParser().read(text);
  const visible = parsed.getVisibleText().trim();
  const fragments = parsed.getFragments();
  if (visible === '') return { visible: text.trim() };
  const quoted = fragments
    .filter((f) => f.isHidden())
    .map((f) => f.getContent())
    .join('\n')
    .trim();
  return quoted === '' ? { visible } : { visible, quoted };
}

/** `<a@x> <b@y>` → message ids as written, angle brackets included. */
export function messageIds(value: string | undefined): string[] {
  if (!value) return [];
  const bracketed = value.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  return value.split(/[\s,]+/).filter((s) => s !== '');
}

/**
 * Whether an id is a Message-ID a mail server wrote (`<local@domain>`, brackets optional), not
 * a key of the service's own (`sha256:…` for a mail without one) nor a provider's record id.
 */
export function isMessageId(id: string): boolean {
  return /^<?[^<>\s@]+@[^<>\s@]+>?$/.test(id.trim());
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
