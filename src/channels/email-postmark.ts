import { safeEqual } from '../crypto/hmac.js';
import type { MailAddress } from '../messaging/events.js';
import { arrayOf, type ChannelAdapter, header, isObject, optionalString, requireObject, requireString, signed, toDate } from './channel.js';
import { emailAdapter } from './email.js';
import { automaticMail, inboundMailEvent } from './email-inbound.js';

/** The user name of the webhook URL's basic auth (docs/webhooks.md, "Connect a Postmark inbound stream"). */
export const POSTMARK_USER = 'postmark';

/**
 * Postmark's inbound webhook as it sends it: one JSON mail (`FromFull`, `ToFull`,
 * `OriginalRecipient`, `Subject`, `TextBody`, `MessageID`, `Headers`, `Attachments`).
 * Postmark signs nothing; its URL carries basic auth (`https://postmark:<webhookSecret>@host/…`),
 * so the `Authorization` header is checked: user `postmark`, password `webhookSecret`, both in
 * constant time. The account is the address the mail was delivered to (`OriginalRecipient`,
 * else the first of `ToFull`); the id is the mail's Message-ID header (what a reply's
 * In-Reply-To names), else Postmark's `MessageID`. Replies go out like the `email` channel's.
 */
export const postmarkAdapter: ChannelAdapter = {
  key: 'email.postmark',
  challenge: () => null,
  verify(_body, headers, cfg) {
    const presented = basicAuth(header(headers, 'authorization'));
    if (!cfg.webhookSecret || !presented) return signed(false);
    // Both compared, whatever the first says: how far a guess got is not told by the time taken.
    const userOk = safeEqual(presented.user, POSTMARK_USER);
    const passwordOk = safeEqual(presented.password, cfg.webhookSecret);
    return signed(userOk && passwordOk);
  },
  eventName: (payload) => (isObject(payload) ? 'inbound' : undefined),
  normalise(payload) {
    const mail = requireObject(payload, 'payload');
    const from = requireObject(mail.FromFull, 'FromFull');
    const to = optionalString(mail.OriginalRecipient) ?? firstRecipient(mail.ToFull);
    const headers = mailHeaders(mail.Headers);
    return [
      inboundMailEvent({
        to: requireString(to, 'OriginalRecipient'),
        messageId: headers.get('message-id') ?? requireString(mail.MessageID, 'MessageID'),
        from: { email: requireString(from.Email, 'FromFull.Email'), name: optionalString(from.Name) },
        toList: postmarkAddresses(mail.ToFull),
        cc: postmarkAddresses(mail.CcFull),
        subject: optionalString(mail.Subject),
        body: optionalString(mail.TextBody) ?? '',
        html: optionalString(mail.HtmlBody),
        inReplyTo: headers.get('in-reply-to'),
        references: headers.get('references'),
        attachments: arrayOf(mail.Attachments, 'Attachments').map((a, i) => {
          const att = requireObject(a, `Attachments[${i}]`);
          return {
            filename: optionalString(att.Name),
            contentType: optionalString(att.ContentType),
            contentId: optionalString(att.ContentID),
          };
        }),
        occurredAt: toDate(mail.Date),
        automatic: automaticMail((name) => headers.get(name)),
      }),
    ];
  },
  send: emailAdapter.send,
};

/** `ToFull`/`CcFull`: `[{ Email, Name }]`; entries without an address are left out. */
function postmarkAddresses(list: unknown): MailAddress[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((a) => {
    const email = isObject(a) ? optionalString(a.Email) : undefined;
    if (!email) return [];
    const name = isObject(a) ? optionalString(a.Name) : undefined;
    return [{ email: email.trim().toLowerCase(), ...(name ? { name } : {}) }];
  });
}

function firstRecipient(toFull: unknown): string | undefined {
  const first = Array.isArray(toFull) ? toFull[0] : undefined;
  return isObject(first) ? optionalString(first.Email) : undefined;
}

/** Postmark's `Headers: [{ Name, Value }]`, by lower-cased name (the first of each). */
function mailHeaders(list: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const [i, h] of arrayOf(list, 'Headers').entries()) {
    const entry = requireObject(h, `Headers[${i}]`);
    const name = optionalString(entry.Name)?.toLowerCase();
    const value = optionalString(entry.Value);
    if (name && value && !out.has(name)) out.set(name, value);
  }
  return out;
}

/** `Basic base64(user:password)` → its parts; undefined when it is not that. */
function basicAuth(value: string | undefined): { user: string; password: string } | undefined {
  const match = value?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
