import { hmacSha256Hex, safeEqual } from '../crypto/hmac.js';
import type { MailAddress } from '../messaging/events.js';
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
import { emailAdapter } from './email.js';
import { automaticMail, inboundMailEvent } from './email-inbound.js';
import { type ParsedForm, parseFormBody } from './form-data.js';

/** How old (or how far ahead) a signed timestamp may be: Mailgun's documented 5 minutes. */
export const MAILGUN_WINDOW_SECONDS = 300;
/** Claims outlive their window by this much, so api processes whose clocks differ a little agree. */
const CLAIM_MARGIN_SECONDS = 60;

/**
 * Mailgun's inbound routes (`forward()` to a URL), as Mailgun posts them: the parsed mail as
 * `multipart/form-data` when it has attachments, else form-encoded (`recipient`, `sender`,
 * `from`, `subject`, `body-plain`, `Message-Id`, `In-Reply-To`, `References`,
 * `message-headers`, `attachment-N` files). Verified as Mailgun documents: `signature` is the
 * hex HMAC-SHA256 of `timestamp` + `token` under the webhook signing key (`webhookSecret`); a
 * timestamp more than 5 minutes from now is refused, and so is a token seen before (claimed in
 * Postgres, so every process agrees). The signature is inside the body, so verification
 * parses it and hands the payload over. The account is `recipient`. Replies go out like the
 * `email` channel's.
 */
export const mailgunAdapter: ChannelAdapter = {
  key: 'email.mailgun',
  challenge: () => null,
  parse: parseFormBody,
  binaryParts: true,
  async verify(body, _headers, cfg, ctx) {
    // Parsed as it will be stored, so the payload handed over is the stored body's.
    const form = parseFormBody(storableText(body.text));
    if (!form || !cfg.webhookSecret || !ctx.claimOnce) return signed(false);
    const { timestamp, token, signature } = form.fields;
    if (!timestamp || !token || !signature || !/^\d{1,12}$/.test(timestamp)) return signed(false);
    if (!safeEqual(signature.toLowerCase(), hmacSha256Hex(cfg.webhookSecret, timestamp + token))) return signed(false);
    const now = (ctx.now?.() ?? new Date()).getTime() / 1000;
    if (Math.abs(now - Number(timestamp)) > MAILGUN_WINDOW_SECONDS) {
      return { ok: false, reason: `timestamp is more than ${MAILGUN_WINDOW_SECONDS} seconds from now` };
    }
    const expiresAt = new Date((Number(timestamp) + MAILGUN_WINDOW_SECONDS + CLAIM_MARGIN_SECONDS) * 1000);
    if (!(await ctx.claimOnce('email.mailgun', token, expiresAt))) return { ok: false, reason: 'token already used' };
    return signed(true, form);
  },
  eventName: (payload) => (isObject(payload) ? 'inbound' : undefined),
  normalise(payload) {
    const form = requireObject(payload, 'payload') as unknown as ParsedForm;
    const fields = requireObject(form.fields, 'fields') as Record<string, string>;
    const headers = messageHeaders(fields['message-headers']);
    const field = (name: string) => optionalString(fields[name]) ?? headers.get(name.toLowerCase());
    const from = parseAddress(field('from')) ?? { email: requireString(fields.sender, 'sender') };
    const recipient = requireString(fields.recipient, 'recipient').split(',')[0]!;
    const contentIds = contentIdsByField(fields['content-id-map']);
    return [
      inboundMailEvent({
        to: recipient,
        messageId: requireString(field('Message-Id'), 'Message-Id'),
        from,
        toList: addressesOf(field('To')),
        cc: addressesOf(field('Cc')),
        subject: field('subject'),
        body: optionalString(fields['body-plain']) ?? '',
        html: optionalString(fields['body-html']),
        inReplyTo: field('In-Reply-To'),
        references: field('References'),
        attachments: (Array.isArray(form.files) ? (form.files as unknown[]) : []).filter(isObject).map((f) => ({
          filename: optionalString(f.filename),
          contentType: optionalString(f.contentType),
          contentId: typeof f.field === 'string' ? contentIds.get(f.field) : undefined,
        })),
        occurredAt: toDate(field('Date')),
        automatic: automaticMail((name) => headers.get(name)),
      }),
    ];
  },
  send: emailAdapter.send,
};

/**
 * `content-id-map`: a JSON object from an inline part's Content-ID to the form field that
 * carries it (`{"<logo@x>": "attachment-1"}`); by field. Anything else names no part.
 */
function contentIdsByField(json: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!json) return out;
  let map: unknown;
  try {
    map = JSON.parse(json);
  } catch {
    return out;
  }
  if (!isObject(map)) return out;
  for (const [cid, field] of Object.entries(map)) if (typeof field === 'string' && !out.has(field)) out.set(field, cid);
  return out;
}

/** `message-headers`: a JSON list of `[name, value]` pairs; by lower-cased name (the first of each). */
function messageHeaders(json: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!json) return out;
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch {
    throw new NormaliseError('message-headers is not JSON');
  }
  if (!Array.isArray(list)) throw new NormaliseError('message-headers is not a list');
  for (const pair of list) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') continue;
    const name = pair[0].toLowerCase();
    if (!out.has(name)) out.set(name, pair[1]);
  }
  return out;
}

/** A To or Cc header: addresses separated by commas outside quotes and angle brackets. */
function addressesOf(value: string | undefined): MailAddress[] {
  if (!value) return [];
  return (value.match(/(?:"[^"]*"|<[^>]*>|[^,])+/g) ?? []).flatMap((part) => {
    const a = parseAddress(part);
    return a ? [{ ...a, email: a.email.toLowerCase() }] : [];
  });
}

/** `Bob <bob@example.com>` or `bob@example.com` → address and name. */
function parseAddress(value: string | undefined): { email: string; name?: string } | undefined {
  if (!value) return undefined;
  const angled = /^\s*(.*?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value);
  if (angled) {
    const name = angled[1]!.replace(/^"(.*)"$/, '$1').trim();
    return { email: angled[2]!, ...(name ? { name } : {}) };
  }
  const bare = value.trim();
  return /^[^\s@]+@[^\s@]+$/.test(bare) ? { email: bare } : undefined;
}
