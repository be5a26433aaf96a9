import type { IntegrationKey } from '../config.js';
import { parseJson } from '../http/raw-body.js';
import type { MessageStatusEvent, StatusEvent } from '../messaging/events.js';
import {
  type ChannelAdapter,
  header,
  hmacMatches,
  isObject,
  lookup,
  optionalString,
  requireObject,
  requireString,
  signed,
} from './channel.js';
import { apiUrl, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

/** Twilio's REST API; its field names are the ones the inbound side reads. */
const SMS_API = 'https://api.twilio.com';

const STATUSES: Record<string, MessageStatusEvent | undefined> = {
  sent: 'sent',
  delivered: 'delivered',
  read: 'read',
  undelivered: 'failed',
  failed: 'failed',
};

/** SMS callbacks arrive as JSON or as application/x-www-form-urlencoded. */
function parseSmsBody(rawBody: string): Record<string, unknown> | undefined {
  const trimmed = rawBody.trimStart();
  if (trimmed.startsWith('{')) {
    const parsed = parseJson(rawBody);
    return isObject(parsed) ? parsed : undefined;
  }
  if (trimmed === '') return undefined;
  return Object.fromEntries(new URLSearchParams(rawBody));
}

/**
 * An SMS provider's inbound messages and delivery receipts (`MessageSid`, `MessageStatus`,
 * `From`, `To`, `Body`, `ErrorCode`, `ErrorMessage`). `x-signature` is HMAC-SHA256 with
 * `webhookSecret`, `sha256=` optional. Exception: a report with no signature header whose
 * `MessageSid` names a message already sent through SMS is accepted; its receipt resolves by
 * that sent message (`resolveBy: 'sent_message'`), so it can only update that message and
 * never claim an account.
 * The account is `To` for an inbound message and `From` (the sender number) for a receipt.
 * Replies: `POST {apiBaseUrl}/2010-04-01/Accounts/{accountSid}/Messages.json`, form `To`,
 * `From` (the connection's number), `Body`, basic auth `accountSid:accessToken`; the id is `sid`.
 */
export const smsAdapter: ChannelAdapter = {
  key: 'sms',
  challenge: () => null,
  parse: parseSmsBody,
  async verify(body, headers, cfg, ctx) {
    const payload = parseSmsBody(body.text);
    const signature = header(headers, 'x-signature');
    if (signature !== undefined) {
      return signed(hmacMatches(signature, body, cfg.webhookSecret, 'optional'), payload);
    }
    const sid = payload ? optionalString(payload.MessageSid) : undefined;
    if (payload && sid !== undefined && (await ctx.isKnownOutboundMessage('sms', sid))) {
      return { ok: true, via: 'correlated', payload };
    }
    return { ok: false };
  },
  eventName: (payload) => (isObject(payload) ? optionalString(payload.MessageStatus) : undefined),
  normalise(payload, delivery) {
    const p = requireObject(payload, 'payload');
    const sid = requireString(p.MessageSid, 'MessageSid');
    const state = requireString(p.MessageStatus, 'MessageStatus').toLowerCase();
    // Accepted without a signature because it named a message already sent: it may update
    // that message and nothing else (docs/webhooks.md, "Integrations").
    const unsigned = delivery.verification === 'correlated';
    if (state === 'received') {
      if (unsigned) return [];
      return [
        {
          type: 'message',
          externalAccountId: requireString(p.To, 'To'),
          externalMessageId: sid,
          contact: { externalId: requireString(p.From, 'From') },
          text: optionalString(p.Body) ?? '',
        },
      ];
    }
    const status = lookup(STATUSES, state);
    if (!status) return []; // queued, sending, accepted: nothing new for the inbox
    // Unsigned, it finds its connection through the message it names, never through an account.
    const owner = unsigned
      ? { resolveBy: 'sent_message' as const }
      : { resolveBy: 'account' as const, externalAccountId: requireString(p.From, 'From') };
    const event: StatusEvent = { type: 'status', ...owner, externalMessageId: sid, status };
    if (status === 'failed') {
      event.error = [optionalString(p.ErrorCode), optionalString(p.ErrorMessage)].filter(Boolean).join(': ') || state;
    }
    return [event];
  },
  send: twilioSend('sms'),
};

/**
 * Twilio's Messages API, for `sms` and `sms.twilio`: form `To`, `From` (the connection's
 * number), `Body`, basic auth `accountSid:accessToken`. With `statusCallback` (sms.twilio) and
 * the public URL, the form also names `StatusCallback` = `<publicUrl>/webhooks/<key>`, so Twilio
 * posts the reply's receipts there with no Status callback URL set in its console; `sms` sends
 * exactly the three fields its neutral format documents, and `MediaUrl` for a reply with a file.
 */
export function twilioSend(key: IntegrationKey, { statusCallback = false } = {}): NonNullable<ChannelAdapter['send']> {
  return async (target, credentials, { timeoutMs, publicUrl }) => {
    const { accountSid, accessToken } = credentials;
    if (!accountSid || !accessToken) return noCredentials(key, { accountSid, accessToken });
    const basic = Buffer.from(`${accountSid}:${accessToken}`).toString('base64');
    const form: Record<string, string> = { To: target.to, From: target.accountId, Body: target.text };
    // MMS: Twilio fetches the file from its signed link (one per reply; docs/attachments.md).
    const file = target.attachments?.[0];
    if (file) form.MediaUrl = file.url;
    if (statusCallback && publicUrl) form.StatusCallback = `${publicUrl}/webhooks/${key}`;
    return postToProvider({
      key,
      url: apiUrl(credentials.apiBaseUrl ?? SMS_API, `/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`),
      headers: { authorization: `Basic ${basic}` },
      body: { form },
      timeoutMs,
      secrets: [accessToken, basic],
      idField: 'sid',
      readId: (body) => (isObject(body) ? optionalString(body.sid) : undefined),
    });
  };
}
