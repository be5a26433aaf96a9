import type { Readable } from 'node:stream';
import type { NodemailerError } from 'nodemailer';
import { safeEqual } from '../crypto/hmac.js';
import type { MailAddress, NormalisedEvent } from '../messaging/events.js';
import { checkedAddress, RefusedAddressError, type ResolveHost, systemResolve } from '../net/address-guard.js';
import { parseSmtpUrl, SMTP_UNREACHABLE, safeDecode, smtpNotReached, smtpTransport } from '../net/smtp.js';
import { isSingleMailbox } from '../text/mailbox.js';
import { truncate } from '../text/truncate.js';
import {
  arrayOf,
  type ChannelAdapter,
  firstHeader,
  isObject,
  optionalString,
  requireObject,
  requireString,
  type SendOutcome,
  type SendTarget,
  signed,
  toDate,
} from './channel.js';
import { inboundMailEvent, isMessageId } from './email-inbound.js';
import { noCredentials, outcomes } from './send-outcome.js';

/** The event types of the neutral format; any other is accepted and ignored. */
const EVENT_TYPES = new Set(['inbound', 'bounce', 'dropped', 'complaint', 'delivered', 'open']);

/**
 * Inbound e-mail and delivery events from the mail provider, in the format documented in
 * docs/webhooks.md (`{ "events": [...] }`, one event, or an array). Authenticated by a plain
 * shared secret: `x-vendor-auth`, else `x-service-signature`, must equal `webhookSecret`.
 * Nothing ties the secret to the body, so it is a bearer credential (docs/webhooks.md, "Integrations").
 * The account is the receiving address (`to`) of inbound mail and the sending address
 * (`account`) of delivery events. Inbound mail may name `inReplyTo` and `references` (a
 * string or a list) to join a known thread; its text keeps only the visible reply.
 * Replies go out over SMTP (nodemailer) to the connection's `smtpUrl`, from its address, in
 * the thread of the last inbound mail; the id is the Message-ID sent, which bounces name. A
 * reply's files are MIME attachments with their filename and content type.
 */
export const emailAdapter: ChannelAdapter = {
  key: 'email',
  challenge: () => null,
  verify(_body, headers, cfg) {
    const presented = firstHeader(headers, ['x-vendor-auth', 'x-service-signature']);
    return signed(!!cfg.webhookSecret && presented !== undefined && safeEqual(presented, cfg.webhookSecret));
  },
  eventName(payload) {
    const first = Array.isArray(payload) ? payload[0] : isObject(payload) && Array.isArray(payload.events) ? payload.events[0] : payload;
    return isObject(first) ? optionalString(first.type) : undefined;
  },
  normalise(payload) {
    const list = Array.isArray(payload)
      ? payload
      : isObject(payload) && payload.events !== undefined
        ? arrayOf(payload.events, 'events')
        : [requireObject(payload, 'payload')];
    return list.flatMap((raw, i): NormalisedEvent[] => {
      const where = `events[${i}]`;
      const e = requireObject(raw, where);
      const type = requireString(e.type, `${where}.type`);
      // Other events a mail relay reports (deferred, click, unsubscribe…) carry nothing for the inbox.
      if (!EVENT_TYPES.has(type)) return [];
      const messageId = requireString(e.messageId, `${where}.messageId`);
      const at = toDate(e.timestamp);
      switch (type) {
        case 'inbound': {
          const from = requireObject(e.from, `${where}.from`);
          const references = Array.isArray(e.references) ? e.references.filter((r) => typeof r === 'string').join(' ') : e.references;
          return [
            inboundMailEvent({
              to: requireString(e.to, `${where}.to`),
              messageId,
              from: { email: requireString(from.email, `${where}.from.email`), name: optionalString(from.name) },
              subject: optionalString(e.subject),
              body: optionalString(e.text) ?? '',
              html: optionalString(e.html),
              ...(e.cc === undefined ? {} : { cc: addressList(e.cc, `${where}.cc`) }),
              inReplyTo: optionalString(e.inReplyTo),
              references: optionalString(references),
              attachments: arrayOf(e.attachments, `${where}.attachments`).map((raw, k) => {
                const a = requireObject(raw, `${where}.attachments[${k}]`);
                requireString(a.content, `${where}.attachments[${k}].content`);
                return {
                  filename: optionalString(a.filename),
                  contentType: optionalString(a.contentType),
                  contentId: optionalString(a.contentId),
                };
              }),
              occurredAt: at,
            }),
          ];
        }
        case 'bounce':
        case 'dropped':
        case 'complaint':
          return [
            {
              type: 'status',
              resolveBy: 'account',
              externalAccountId: requireString(e.account, `${where}.account`).toLowerCase(),
              externalMessageId: messageId,
              status: 'failed',
              error: `${type}: ${optionalString(e.reason) ?? 'no reason given'}`,
              occurredAt: at,
            },
          ];
        case 'delivered':
        case 'open':
          return [
            {
              type: 'status',
              resolveBy: 'account',
              externalAccountId: requireString(e.account, `${where}.account`).toLowerCase(),
              externalMessageId: messageId,
              status: type === 'open' ? 'read' : 'delivered',
              occurredAt: at,
            },
          ];
        default:
          return [];
      }
    });
  },
  async send(target, credentials, { timeoutMs, smtp }) {
    if (!credentials.smtpUrl) return noCredentials('email', { smtpUrl: credentials.smtpUrl });
    return sendMail(target, credentials.smtpUrl, timeoutMs, smtp ?? { allowPrivate: false });
  },
};

/** The neutral format's `cc`: a list of `{email, name?}` or bare addresses. */
function addressList(value: unknown, where: string): MailAddress[] {
  return arrayOf(value, where).flatMap((raw) => {
    if (typeof raw === 'string') return raw === '' ? [] : [{ email: raw.trim().toLowerCase() }];
    if (!isObject(raw) || typeof raw.email !== 'string') return [];
    const name = optionalString(raw.name);
    return [{ email: raw.email.trim().toLowerCase(), ...(name ? { name } : {}) }];
  });
}

/** Failures without an SMTP reply that another attempt would meet again. */
const PERMANENT_CODES = new Set(['ECONFIG', 'EENVELOPE', 'EMESSAGE', 'EAUTH', 'ENOAUTH', 'EMAXRECIPIENTS', 'EREQUIRETLS']);

/**
 * What a connection that logs in apart from its URL (`email.imap`) adds to a send: the SMTP
 * login, and `keep`, handed the mail's bytes once the server took it (for the Sent folder).
 */
export interface SendMailExtra {
  auth?: { user: string; pass: string };
  keep?: (raw: Buffer) => Promise<void>;
}

export async function sendMail(
  target: SendTarget,
  smtpUrl: string,
  timeoutMs: number,
  guard: { allowPrivate: boolean; resolve?: ResolveHost },
  extra: SendMailExtra = {},
): Promise<SendOutcome> {
  let password = '';
  try {
    password = new URL(smtpUrl).password;
  } catch {
    // Not echoed: the text may hold a password.
  }
  const { failed, retry } = outcomes([smtpUrl, password, safeDecode(password), extra.auth?.pass]);
  const parsed = parseSmtpUrl(smtpUrl);
  if (!parsed) return failed('email: smtpUrl must be an smtp:// or smtps:// URL');
  // A handle stored before inbound mail was held to one mailbox: never read as a list.
  if (!isSingleMailbox(target.to.toLowerCase())) return failed('email: the recipient is not one e-mail address');
  const smtp = extra.auth ? { ...parsed, auth: extra.auth } : parsed;

  // The host passes the outbound address guard, and the connection goes to the very address
  // that was checked (the name is kept only for TLS: SNI and the certificate check), so a name
  // that rebinds to an internal address between check and connect gets nowhere.
  let address: string;
  try {
    address = (await checkedAddress(guard.resolve ?? systemResolve, smtp.host, guard.allowPrivate)).address;
  } catch (err) {
    if (err instanceof RefusedAddressError) return failed(`email: ${err.message}; SMTP servers must be on public addresses`);
    return retry(`email: ${SMTP_UNREACHABLE}`);
  }
  // MIME parts streamed from the storage as nodemailer writes the message.
  const attachments: { filename: string; contentType: string; content: Readable }[] = [];
  try {
    for (const a of target.attachments ?? [])
      attachments.push({ filename: a.filename, contentType: a.contentType, content: await a.open() });
  } catch (err) {
    for (const a of attachments) a.content.destroy();
    throw err;
  }
  const transport = await smtpTransport(address, smtp, timeoutMs);
  const own = target.email;
  // Only ids a mail server wrote go out: a key of ours (`sha256:…`, a mail read without a
  // Message-ID) in a reply queued before its headers were checked is left out.
  const named = own ? (own.inReplyTo ?? undefined) : target.replyTo?.messageId;
  const inReplyTo = named !== undefined && isMessageId(named) ? named : undefined;
  const references = (own ? (own.references ?? []) : [...(target.replyTo?.references ?? []), ...(inReplyTo ? [inReplyTo] : [])]).filter(
    isMessageId,
  );
  try {
    const message = {
      from: target.accountId,
      to: target.to,
      ...(own && own.cc.length > 0 ? { cc: own.cc.map((a) => a.email) } : {}),
      ...(own?.bcc && own.bcc.length > 0 ? { bcc: own.bcc.map((a) => a.email) } : {}),
      ...(own ? { messageId: own.messageId } : {}),
      subject:
        (own ? (own.subject ?? undefined) : replySubject(target.replyTo?.subject)) ?? firstLineSubject(target.text, attachments.length),
      text: target.text,
      html: textAsHtml(target.text),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(inReplyTo ? { inReplyTo } : {}),
      ...(references && references.length > 0 ? { references } : {}),
      ...(target.automatic ? { headers: automaticHeaders(inReplyTo !== undefined) } : {}),
      disableFileAccess: true,
      disableUrlAccess: true,
    };
    // The socket timeouts bound each wait; this bounds the whole attempt.
    const signal = AbortSignal.timeout(timeoutMs);
    if (!extra.keep) {
      const info = await transport.sendMail({ ...message, signal });
      const refused = refusedRecipient(info, target.to);
      if (refused) return failed(refused);
      return info.messageId ? { outcome: 'sent', externalId: info.messageId } : failed('email: the SMTP transport gave no Message-ID');
    }
    // Built once, so the copy kept is the very mail sent (Bcc is in the envelope, not the bytes).
    const { default: MailComposer } = await import('nodemailer/lib/mail-composer');
    const composed = new MailComposer(message).compile();
    const raw = await composed.build();
    const envelope = composed.getEnvelope();
    const info = await transport.sendMail({ envelope, raw, signal });
    const messageId = composed.messageId();
    // Sent to the Cc or Bcc it was: the copy is kept even when the contact was refused.
    await extra.keep(raw);
    const refused = refusedRecipient(info, target.to);
    return refused ? failed(refused) : { outcome: 'sent', externalId: messageId };
  } catch (err) {
    const e = err as NodemailerError;
    if (e.code === 'EABORT') return retry(`email: no answer within ${timeoutMs} ms`);
    // Until a server has greeted us as SMTP, whatever answered is not shown.
    if (smtpNotReached(e)) return retry(`email: ${SMTP_UNREACHABLE}`);
    const text = `email: ${e.message}`;
    if (e.responseCode !== undefined) {
      // 5xx is a permanent refusal, 4xx a transient one (RFC 5321); nodemailer also counts 503
      // (bad sequence) as transient.
      const permanent = e.permanent ?? (e.responseCode >= 500 && e.responseCode !== 503);
      return permanent ? failed(text) : retry(text);
    }
    return PERMANENT_CODES.has(e.code ?? '') ? failed(text) : retry(text);
  } finally {
    transport.close();
    // A send that failed before reading them leaves nothing open.
    for (const a of attachments) a.content.destroy();
  }
}

/**
 * Why the contact's address was refused while a Cc or Bcc was taken, else undefined. The SMTP
 * server then sends the mail to the others only (nodemailer fails a send only when every
 * recipient is refused), so the reply never reached the one it answers: it fails, and is not
 * tried again, which would send the others a second copy.
 */
function refusedRecipient(info: { rejected?: unknown[]; rejectedErrors?: NodemailerError[] }, to: string): string | undefined {
  const address = to.toLowerCase();
  const refused = (info.rejected ?? []).some(
    (r) => (typeof r === 'string' ? r : (r as { address?: string }).address)?.toLowerCase() === address,
  );
  if (!refused) return undefined;
  const why = info.rejectedErrors?.find((e) => e.recipient?.toLowerCase() === address)?.response;
  return `email: the SMTP server refused the recipient ${to}${why ? `: ${why}` : ''}; the mail went only to its Cc/Bcc`;
}

/**
 * The subject of a mail that answers none (a conversation the business starts, or a thread
 * whose mail had no subject): the text's first line, cut at a word within 78 characters as
 * mail readers show it; for files alone, what they are. An empty subject reads as spam.
 */
export function firstLineSubject(text: string, files: number): string {
  const line =
    text
      .split(/\r?\n/)
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  if (line === '') return files === 1 ? 'A file for you' : 'Files for you';
  if (line.length <= 78) return line;
  const cut = truncate(line, 77);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The reply's HTML part: its text, escaped, paragraphs and line breaks kept. */
export function textAsHtml(text: string): string {
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const paragraphs = escaped
    .split(/\r?\n\s*\r?\n/)
    .filter((p) => p.trim() !== '')
    .map((p) => `<p>${p.replace(/\r?\n/g, '<br>')}</p>`);
  return `<!doctype html><html><body>${paragraphs.join('')}</body></html>`;
}

/**
 * The headers of a mail the service writes on its own (RFC 3834): `auto-replied` when it
 * answers a mail (an away message, a rule's reply), else `auto-generated` (a survey); and
 * Exchange's `X-Auto-Response-Suppress`. A contact's out-of-office reply then stays quiet:
 * two auto-responders would otherwise answer each other, as ours ignores theirs.
 */
export function automaticHeaders(answersMail: boolean): Record<string, string> {
  return { 'Auto-Submitted': answersMail ? 'auto-replied' : 'auto-generated', 'X-Auto-Response-Suppress': 'All' };
}

/**
 * The prefixes mail clients write on a reply (RFC 5322 §3.6.5's `Re:`, and what Outlook writes
 * in German, Scandinavian languages, Dutch, Polish, Italian, Portuguese, Turkish, Greek and
 * Chinese), with a count some add (`Re[2]:`, `Re(2):`). A forward's `Fwd:` is no reply and stays.
 */
const REPLY_PREFIXES = /^(?:\s*(?:re|aw|sv|antw|odp|rif|res|ynt|απ|回复|答复|回覆)\s*(?:\[\d+\]|\(\d+\))?\s*[:：])+\s*/iu;

/**
 * `Re: <subject>`: one `Re:` in place of every reply prefix the subject starts with, so the
 * subject stays the same however many times a German (`AW:`) or Swedish (`SV:`) client and
 * the service answer each other; none when unknown.
 */
export function replySubject(subject: string | undefined): string | undefined {
  if (subject === undefined || subject.trim() === '') return undefined;
  const trimmed = subject.trim();
  const bare = trimmed.replace(REPLY_PREFIXES, '');
  // One `Re:` alone is kept as written (`RE:` too): the customer's client shows it so.
  const single = /^re\s*:\s*/i.exec(trimmed);
  if (single && trimmed.slice(single[0].length) === bare) return trimmed;
  return bare === '' ? 'Re:' : `Re: ${bare}`;
}
