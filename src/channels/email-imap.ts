import { createHash } from 'node:crypto';
import type { AddressObject, ParsedMail } from 'mailparser';
import type { MailAddress } from '../messaging/events.js';
import { type ImapLogin, openImap, sentFolder } from '../net/imap.js';
import { type ChannelAdapter, isObject, NormaliseError, optionalString, requireObject, requireString, signed, toDate } from './channel.js';
import { sendMail } from './email.js';
import { inboundMailEvent } from './email-inbound.js';
import { noCredentials } from './send-outcome.js';

/** The largest mail read whole; a larger one is stored by its headers and fails with this reason. */
export const IMAP_MAX_MESSAGE_BYTES = 25 * 1024 * 1024;

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
    attachments: { filename?: string; contentType?: string }[];
  };
}

/** The Message-ID header as written, or a hash of the bytes: the same mail always gets the same key. */
export function messageKeyOf(messageId: string | undefined, raw: Buffer): string {
  const id = messageId?.trim();
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

/** Reads one raw mail of the mailbox `account`; never throws: what cannot be read becomes `error`. */
export async function readImapMail(account: string, raw: Buffer, headersOnly = false): Promise<ImapMailPayload> {
  let parsed: ParsedMail;
  try {
    parsed = await (await parser())(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  } catch (err) {
    return { account, messageKey: messageKeyOf(undefined, raw), error: `the mail cannot be parsed: ${(err as Error).message}` };
  }
  const messageKey = messageKeyOf(parsed.messageId, raw);
  if (headersOnly)
    return {
      account,
      messageKey,
      error: `the mail is larger than ${IMAP_MAX_MESSAGE_BYTES / 1024 / 1024} MB: it is kept in the mailbox only`,
    };
  const from = addresses(parsed.from)[0] ?? null;
  const references = Array.isArray(parsed.references) ? parsed.references.join(' ') : parsed.references;
  return {
    account,
    messageKey,
    mail: {
      from,
      to: addresses(parsed.to),
      cc: addresses(parsed.cc),
      ...(parsed.subject ? { subject: parsed.subject } : {}),
      text: parsed.text ?? '',
      ...(parsed.html ? { html: parsed.html } : {}),
      ...(parsed.inReplyTo ? { inReplyTo: parsed.inReplyTo } : {}),
      ...(references ? { references } : {}),
      ...(parsed.date && !Number.isNaN(parsed.date.getTime()) ? { date: parsed.date.toISOString() } : {}),
      attachments: parsed.attachments.map((a) => ({
        ...(a.filename ? { filename: a.filename } : {}),
        ...(a.contentType ? { contentType: a.contentType } : {}),
      })),
    },
  };
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

/** Appends a sent mail, marked read, to the mailbox's Sent folder when it has one. */
async function appendToSent(login: ImapLogin, raw: Buffer, options: Parameters<typeof openImap>[1]): Promise<void> {
  const client = await openImap(login, options);
  try {
    const folder = await sentFolder(client);
    if (folder) await client.append(folder, raw, ['\\Seen']);
  } finally {
    await client.logout().catch(() => client.close());
  }
}
