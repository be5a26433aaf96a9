import { hmacDigest, safeEqual } from '../crypto/hmac.js';
import type { InboundAttachment, MessageStatusEvent, StatusEvent } from '../messaging/events.js';
import {
  type ChannelAdapter,
  header,
  isObject,
  lookup,
  optionalString,
  requireObject,
  requireString,
  type Verification,
  type VerifyRequest,
} from './channel.js';
import { kindOfType } from './media-placeholder.js';
import { twilioSend } from './sms.js';

const STATUSES: Record<string, MessageStatusEvent | undefined> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
};

/** Twilio sends at most 10 media per message (`MediaUrl0` … `MediaUrl9`). */
const MAX_MEDIA = 10;

/** The empty TwiML document: "received, nothing to reply". */
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

/**
 * A form body's parameters, every value of a repeated name kept: Twilio signs all of them.
 * URLSearchParams never throws: a malformed escape stays as it was sent, so such a body
 * simply fails its signature.
 */
export function formParams(rawBody: string): Map<string, string[]> {
  const params = new Map<string, string[]>();
  for (const [name, value] of new URLSearchParams(rawBody)) {
    const values = params.get(name);
    if (values) values.push(value);
    else params.set(name, [value]);
  }
  return params;
}

/** The payload: one value per name (the last, as Object.fromEntries keeps it). */
export function parseForm(rawBody: string): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(rawBody));
}

/**
 * The payload of parameters already read (formParams): the last value of each name, in the
 * order the names first came, as parseForm makes it (a name such as `__proto__` too).
 */
export function payloadOf(params: Map<string, string[]>): Record<string, string> {
  const entries: [string, string][] = [];
  for (const [name, values] of params) entries.push([name, values[values.length - 1]!]);
  return Object.fromEntries(entries);
}

/** What Twilio signs after the URL: every name with each of its distinct values, names and values sorted. */
function signedParams(params: Map<string, string[]>): string {
  let data = '';
  for (const name of [...params.keys()].sort()) {
    for (const value of [...new Set(params.get(name))].sort()) data += name + value;
  }
  return data;
}

/**
 * Twilio's signature: base64 HMAC-SHA1(auth token, URL + every parameter's name and value,
 * names sorted; a repeated name's distinct values sorted), as twilio-node computes it.
 */
export function twilioSignature(authToken: string, url: string, params: Map<string, string[]>): string {
  return signatureOver(authToken, new URL(url).toString(), signedParams(params));
}

function signatureOver(authToken: string, url: string, signed: string): string {
  return hmacDigest('sha1', authToken, Buffer.from(url + signed, 'utf8'), 'base64');
}

/** urlForms of the URLs seen lately: the public URL, mostly, the same on every request. */
const formsOf = new Map<string, string[]>();
const FORMS_KEPT = 64;

/**
 * The URL as configured and without its port: Twilio's signing of ports is inconsistent,
 * so its own SDK accepts either (twilio-node's validateRequest).
 */
function urlForms(url: string): string[] {
  const known = formsOf.get(url);
  if (known) return known;
  const parsed = new URL(url);
  const asGiven = parsed.toString();
  parsed.port = '';
  const forms = asGiven === parsed.toString() ? [asGiven] : [asGiven, parsed.toString()];
  if (formsOf.size >= FORMS_KEPT) formsOf.clear();
  formsOf.set(url, forms);
  return forms;
}

function signedFor(signature: string, authToken: string, url: string, signed: string): boolean {
  // Every form is computed and compared, so the time taken does not depend on which matched.
  return urlForms(url)
    .map((form) => safeEqual(signature, signatureOver(authToken, form, signed)))
    .reduce((a, b) => a || b, false);
}

function verifyTwilio(
  rawBody: string,
  signature: string | undefined,
  authToken: string | undefined,
  request?: VerifyRequest,
): Verification {
  if (!request) return { ok: false };
  if (!authToken) {
    request.warn('sms.twilio: authToken is not set in INBOX_INTEGRATIONS; every Twilio delivery is refused');
    return { ok: false };
  }
  if (signature === undefined) return { ok: false };
  // The body is read once: its parameters are what is signed, and the payload.
  const params = formParams(rawBody);
  const signed = signedParams(params);
  if (signedFor(signature, authToken, request.publicUrl, signed)) return { ok: true, via: 'signed', payload: payloadOf(params) };
  // The commonest setup error: Twilio signed the URL it was given, which is not the one
  // INBOX_PUBLIC_URL makes. Say which URL was expected, and what was signed when it can be told.
  if (request.requestUrl !== request.publicUrl && signedFor(signature, authToken, request.requestUrl, signed)) {
    request.warn(
      `sms.twilio: X-Twilio-Signature is for ${request.requestUrl}, but the expected URL is ${request.publicUrl}: set INBOX_PUBLIC_URL to the base of the URL configured in Twilio`,
    );
  } else {
    request.warn(
      `sms.twilio: X-Twilio-Signature does not match the expected URL ${request.publicUrl}: the webhook URL configured in Twilio must be exactly this URL, and sms.twilio.authToken the account's auth token`,
    );
  }
  return { ok: false };
}

/** An MMS's media: `MediaUrlN` with `MediaContentTypeN`, downloaded with the account's basic auth. */
function mediaOf(p: Record<string, unknown>): { attachments?: InboundAttachment[] } {
  const count = Math.min(Number.parseInt(optionalString(p.NumMedia) ?? '0', 10) || 0, MAX_MEDIA);
  const attachments: InboundAttachment[] = [];
  for (let i = 0; i < count; i++) {
    const url = optionalString(p[`MediaUrl${i}`]);
    const contentType = optionalString(p[`MediaContentType${i}`]);
    if (url)
      attachments.push({
        kind: kindOfType(contentType),
        ...(contentType ? { contentType } : {}),
        source: { from: 'url', url, auth: 'basic' },
      });
  }
  return attachments.length > 0 ? { attachments } : {};
}

/**
 * Twilio's own messaging webhooks, form-encoded as a Twilio number sends them: incoming
 * SMS/MMS (`SmsStatus=received`; the account is `To`, the contact `From`) and status
 * callbacks (`MessageStatus`; found by the `MessageSid` this key sent). `X-Twilio-Signature`
 * is checked over INBOX_PUBLIC_URL + the request's path and query and the form parameters
 * with `authToken`; an accepted delivery is answered with an empty TwiML document. Replies go
 * through Twilio's Messages API as the `sms` key's, plus `StatusCallback` pointing back at this
 * webhook, so their receipts arrive without a console setting (docs/webhooks.md).
 */
export const smsTwilioAdapter: ChannelAdapter = {
  key: 'sms.twilio',
  challenge: () => null,
  parse: parseForm,
  verify: (body, headers, cfg, ctx) => verifyTwilio(body.text, header(headers, 'x-twilio-signature'), cfg.authToken, ctx.request),
  eventName: (payload) => (isObject(payload) ? (optionalString(payload.MessageStatus) ?? optionalString(payload.SmsStatus)) : undefined),
  normalise(payload) {
    const p = requireObject(payload, 'payload');
    const sid = requireString(p.MessageSid ?? p.SmsSid, 'MessageSid');
    const state = requireString(p.MessageStatus ?? p.SmsStatus, 'MessageStatus').toLowerCase();
    if (state === 'received') {
      return [
        {
          type: 'message',
          externalAccountId: requireString(p.To, 'To'),
          externalMessageId: sid,
          contact: { externalId: requireString(p.From, 'From'), name: optionalString(p.ProfileName) },
          // An MMS's text is its Body; its media are attachments.
          text: optionalString(p.Body) ?? '',
          ...mediaOf(p),
        },
      ];
    }
    const status = lookup(STATUSES, state);
    if (!status) return []; // queued, sending, accepted, scheduled: nothing new for the inbox
    const event: StatusEvent = { type: 'status', resolveBy: 'sent_message', externalMessageId: sid, status };
    if (status === 'failed') {
      event.error = [optionalString(p.ErrorCode), optionalString(p.ErrorMessage)].filter(Boolean).join(': ') || state;
    }
    return [event];
  },
  acceptedAnswer: { contentType: 'text/xml; charset=utf-8', body: EMPTY_TWIML },
  send: twilioSend('sms.twilio', { statusCallback: true }),
};
