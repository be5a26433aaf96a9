import { createHash } from 'node:crypto';
import type { ImapFlow } from 'imapflow';
import type { AddressObject, ParsedMail } from 'mailparser';
import type { MailAddress } from '../messaging/events.js';
import { type ImapLogin, openImap, sentFolder } from '../net/imap.js';
import { wellFormed } from '../text/well-formed.js';
import {
  type ChannelAdapter,
  isObject,
  NormaliseError,
  optionalString,
  requireObject,
  requireString,
  signed,
  storableText,
  toDate,
} from './channel.js';
import { sendMail } from './email.js';
import { deliveryFailure } from './email-bounce.js';
import { automaticMail, inboundMailEvent } from './email-inbound.js';
import { noCredentials } from './send-outcome.js';

const MB = 1024 * 1024;

/**
 * The largest mail read whole: one that can carry a file of INBOX_MAX_ATTACHMENT_BYTES, which
 * base64 writes as 4 bytes for 3 with a line break every 76 characters, and 1 MB of text and
 * headers besides (36 MB for the default 25 MB); never below 25 MB, what the largest providers
 * send. A larger mail is stored by its headers and fails with the reason.
 */
export function imapMaxMessageBytes(maxAttachmentBytes: number): number {
  const encoded = Math.ceil(((maxAttachmentBytes * 4) / 3) * (78 / 76)) + MB;
  return Math.max(25 * MB, Math.ceil(encoded / MB) * MB);
}

/**
 * A mail as the mailbox reader parsed it (mailparser), stored as the inbox row's payload beside
 * its raw RFC 822 bytes: parsing is asynchronous, so it happens once, when the mail is read,
 * and a mail that does not parse is stored with `error` and fails with it.
 */
export interface ImapMailPayload {
  /** The connection's address: the mailbox the mail was in, whatever its headers say. */
  account: string;
  /** The Message-ID, or `sha256:<hex of the bytes>` for a mail without one. */
  messageKey: string;
  error?: string;
  mail?: {
    from: { email: string; name?: string } | null;
    to: MailAddress[];
    cc: MailAddress[];
    subject?: string;
    text: string;
    html?: string;
    inReplyTo?: string;
    references?: string;
    date?: string;
    attachments: { filename?: string; contentType?: string; contentId?: string }[];
    /** A machine sent it, by its headers (automaticMail): no away message answers it. */
    automatic?: true;
    /** A delivery report: the mail it returns and why (./email-bounce.ts). */
    bounce?: { messageId: string; error: string; recipient?: string };
  };
}

/** The longest Message-ID kept as the key: a header line's limit (RFC 5322 §2.1.1), well inside an index entry's. */
const MESSAGE_KEY_MAX = 998;

/**
 * The Message-ID header as written (a NUL or a lone surrogate as U+FFFD), a hash of it when
 * longer than MESSAGE_KEY_MAX, or a hash of the bytes: the same mail always gets the same key.
 * A key PostgreSQL cannot store or index would fail the commit of its whole batch of mails,
 * and the mailbox would be read again and again without moving on.
 */
export function messageKeyOf(messageId: string | undefined, raw: Buffer): string {
  const id = messageId === undefined ? '' : storableText(wellFormed(messageId.trim()));
  if (id.length > MESSAGE_KEY_MAX) return `sha256:${createHash('sha256').update(id).digest('hex')}`;
  return id ? id : `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

function addresses(value: AddressObject | AddressObject[] | undefined): MailAddress[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((o) =>
    o.value
      .flatMap((a) => [a, ...(a.group ?? [])])
      .flatMap((a) => (a.address ? [{ email: a.address.trim().toLowerCase(), ...(a.name ? { name: a.name } : {}) }] : [])),
  );
}

/** The MIME parser, loaded with the first mail read: a process with no mailbox never needs it. */
async function parser() {
  return (await import('mailparser')).simpleParser;
}

/**
 * Reads one raw mail of the mailbox `account`; never throws: what cannot be read becomes
 * `error`. `tooLargeAbove`, when given, says `raw` is only the headers of a mail above that size.
 */
export async function readImapMail(account: string, raw: Buffer, tooLargeAbove?: number): Promise<ImapMailPayload> {
  let parsed: ParsedMail;
  try {
    // No text made of the HTML here: mailparser's keeps link targets (`javascript:`, trackers);
    // a mail without a plain part gets the text of its sanitized HTML when it is processed.
    parsed = await (await parser())(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true, skipHtmlToText: true });
  } catch (err) {
    return { account, messageKey: messageKeyOf(undefined, raw), error: `the mail cannot be parsed: ${(err as Error).message}` };
  }
  const messageKey = messageKeyOf(parsed.messageId, raw);
  if (tooLargeAbove !== undefined)
    return { account, messageKey, error: `the mail is larger than ${tooLargeAbove / MB} MB: it is kept in the mailbox only` };
  const from = addresses(parsed.from)[0] ?? null;
  const references = Array.isArray(parsed.references) ? parsed.references.join(' ') : parsed.references;
  const bounce = deliveryFailure(parsed);
  return {
    account,
    messageKey,
    mail: {
      from,
      to: addresses(parsed.to),
      cc: addresses(parsed.cc),
      ...(parsed.subject ? { subject: parsed.subject } : {}),
      text: parsed.text ?? undeclaredParts(parsed, raw),
      ...(parsed.html ? { html: parsed.html } : {}),
      ...(parsed.inReplyTo ? { inReplyTo: parsed.inReplyTo } : {}),
      ...(references ? { references } : {}),
      ...(parsed.date && !Number.isNaN(parsed.date.getTime()) ? { date: parsed.date.toISOString() } : {}),
      attachments: parsed.attachments.map((a) => ({
        ...(a.filename ? { filename: a.filename } : {}),
        ...(a.contentType ? { contentType: a.contentType } : {}),
        ...(a.cid ? { contentId: a.cid } : {}),
      })),
      ...(automaticMail((name) => rawHeader(parsed, name)) ? { automatic: true as const } : {}),
      ...(bounce ? { bounce } : {}),
    },
  };
}

/** A header's value as written (the parser turns some into objects): its first line's, unfolded. */
function rawHeader(parsed: ParsedMail, name: string): string | undefined {
  const line = parsed.headerLines.find((h) => h.key === name)?.line;
  if (line === undefined) return undefined;
  return line
    .slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

/**
 * The body of a multipart mail in which the parser found no part at all (its parts are cut by
 * a boundary other than the one declared, or by none): shown as it is, so what the sender
 * wrote reaches the agent rather than an empty message.
 */
function undeclaredParts(parsed: ParsedMail, raw: Buffer): string {
  if (parsed.html || parsed.attachments.length > 0) return '';
  const type = parsed.headers.get('content-type') as { value?: string } | undefined;
  if (!/^multipart\//i.test(type?.value ?? '')) return '';
  const start = raw.indexOf('\r\n\r\n');
  const body = start < 0 ? '' : raw.subarray(start + 4).toString('utf8');
  return body.trim();
}

/** The `index`-th file of a stored raw mail, by the same parser that listed it. */
export async function imapMailFile(raw: Buffer, index: number): Promise<Buffer | undefined> {
  const parsed = await (await parser())(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true, skipHtmlToText: true });
  return parsed.attachments[index]?.content;
}

/**
 * Mailboxes the service reads itself (docs/email.md, "Mailboxes"): no provider posts to a
 * webhook, so every delivery comes from the mailbox reader (src/mailboxes), stored with its
 * payload, and the webhook route refuses everything. Replies go out over the connection's
 * SMTP server with its `username` and `password`, and are appended to the mailbox's Sent folder.
 */
export const imapAdapter: ChannelAdapter = {
  key: 'email.imap',
  challenge: () => null,
  verify: () => signed(false),
  // Rows always carry their payload (the reader's parse); a raw mail alone is not read here.
  parse: () => undefined,
  eventName: () => 'inbound',
  normalise(payload, delivery) {
    const p = requireObject(payload, 'payload') as unknown as ImapMailPayload;
    if (typeof p.error === 'string') throw new NormaliseError(p.error);
    const mail = requireObject(p.mail, 'mail') as unknown as NonNullable<ImapMailPayload['mail']>;
    const from = isObject(mail.from) ? mail.from : undefined;
    if (!from) throw new NormaliseError('the mail has no From address');
    return [
      inboundMailEvent({
        to: delivery.account ?? requireString(p.account, 'account'),
        messageId: requireString(p.messageKey, 'messageKey'),
        from: { email: requireString(from.email, 'from.email'), name: optionalString(from.name) },
        toList: mail.to,
        cc: mail.cc,
        subject: optionalString(mail.subject),
        body: optionalString(mail.text) ?? '',
        html: optionalString(mail.html),
        inReplyTo: optionalString(mail.inReplyTo),
        references: optionalString(mail.references),
        attachments: mail.attachments,
        occurredAt: toDate(mail.date),
        automatic: mail.automatic === true,
        ...(isObject(mail.bounce)
          ? {
              bounceOf: {
                externalMessageId: mail.bounce.messageId,
                error: mail.bounce.error,
                ...(typeof mail.bounce.recipient === 'string' ? { recipient: mail.bounce.recipient } : {}),
              },
            }
          : {}),
      }),
    ];
  },
  async send(target, credentials, options) {
    const { smtpUrl, imapUrl, username, password } = credentials;
    if (!smtpUrl || !imapUrl || !username || !password) return noCredentials('email.imap', { imapUrl, smtpUrl, username, password });
    const guard = options.smtp ?? { allowPrivate: false };
    return sendMail(target, smtpUrl, options.timeoutMs, guard, {
      auth: { user: username, pass: password },
      // The mail went out: a Sent folder that cannot be reached now loses only its copy.
      keep: (raw) => appendToSent({ imapUrl, username, password }, raw, { ...guard, timeoutMs: options.timeoutMs }).catch(() => {}),
    });
  },
};

/**
 * Appends a sent mail, marked read, to the mailbox's Sent folder when it has one, within
 * `timeoutMs` in all: the mail is sent already, and its send is recorded only after this, so
 * a server that stalls (a login or an APPEND left unanswered: imapflow waits minutes on a
 * quiet socket) would hold the reply `queued` and the sends behind it. Past the deadline the
 * connection is closed and the copy given up.
 */
async function appendToSent(login: ImapLogin, raw: Buffer, options: Parameters<typeof openImap>[1]): Promise<void> {
  let client: ImapFlow | undefined;
  let late = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      late = true;
      client?.close();
      resolve();
    }, options.timeoutMs);
  });
  const copy = (async () => {
    const opened = await openImap(login, options);
    client = opened;
    if (late) return opened.close();
    try {
      const folder = await sentFolder(opened);
      if (folder) await opened.append(folder, raw, ['\\Seen']);
    } finally {
      if (!late) await opened.logout().catch(() => opened.close());
    }
  })();
  try {
    await Promise.race([copy, deadline]);
  } finally {
    clearTimeout(timer);
    // Given up: what the closed connection still rejects is of no interest.
    copy.catch(() => {});
  }
}
