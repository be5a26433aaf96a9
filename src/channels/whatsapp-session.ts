import type { IntegrationKey } from '../config.js';
import type { MessageStatusEvent } from '../messaging/events.js';
import {
  type ChannelAdapter,
  firstHeader,
  hmacMatches,
  isObject,
  lookup,
  NormaliseError,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
} from './channel.js';
import { apiUrl, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

const SIGNATURE_HEADERS = ['x-gatewayone-signature', 'x-webhook-signature', 'x-signature'] as const;

/** Gateway ack codes: 1 server, 2 device, 3 read, 4 played, -1 error. 0 (pending) is no news. */
const ACKS: Record<string, MessageStatusEvent> = { '1': 'sent', '2': 'delivered', '3': 'read', '4': 'read', '-1': 'failed' };

/** Where WhatsApp posts contacts' status updates ("stories"); gateways deliver them as `message` events. */
export const STATUS_BROADCAST = 'status@broadcast';

/** A message id as gateways write it: a string, or whatsapp-web.js's `{ _serialized, … }` (as replies' ids are read). */
export function messageIdOf(p: Record<string, unknown>): string {
  return requireString(isObject(p.id) ? p.id._serialized : p.id, 'payload.id');
}

/**
 * A WhatsApp session gateway (one phone session per connection), e.g.
 * `{ "event": "message", "session": "acme-main", "payload": { id, from, fromMe, body, timestamp } }`
 * and `{ "event": "message.ack", "session": …, "payload": { id, ack } }`; contacts' status
 * updates (`from: "status@broadcast"`) are skipped. The scheme is chosen by
 * which header arrived, not by configuration; every header is checked against the same
 * `webhookSecret` (16..255 characters), `sha256=` optional. Verification parses nothing, so
 * the stored payload comes from the raw-body fallback. The account is `session`.
 * Replies (WAHA): `POST {apiBaseUrl}/api/sendText` with `X-Api-Key`, `{session, chatId, text}`;
 * the id is `id` (a string) or `id._serialized`. The gateway is self-hosted, so there is no
 * default host; a gateway run without an API key is allowed, so the token is optional.
 */
export const whatsappSessionAdapter: ChannelAdapter = {
  key: 'whatsapp_session',
  challenge: () => null,
  verify: (body, headers, cfg) => signed(hmacMatches(firstHeader(headers, SIGNATURE_HEADERS), body, cfg.webhookSecret, 'optional')),
  eventName: (payload) => (isObject(payload) ? optionalString(payload.event) : undefined),
  normalise(payload) {
    const body = requireObject(payload, 'payload');
    const event = requireString(body.event, 'event');
    const session = requireString(body.session, 'session');
    const p = requireObject(body.payload, 'payload.payload');
    if (event === 'message') {
      if (p.fromMe === true) return []; // sent from the phone itself
      const from = requireString(p.from, 'payload.from');
      // A contact's status update, posted to all their contacts: not a conversation.
      if (from === STATUS_BROADCAST) return [];
      const name = isObject(p._data) ? optionalString(p._data.notifyName) : optionalString(p.notifyName);
      return [
        {
          type: 'message',
          externalAccountId: session,
          externalMessageId: messageIdOf(p),
          contact: { externalId: from.replace(/@c\.us$/, ''), name },
          text: optionalString(p.body) ?? '',
          occurredAt: toDate(p.timestamp),
        },
      ];
    }
    if (event === 'message.ack') {
      const ack = lookup(ACKS, String(p.ack));
      if (p.ack === undefined) throw new NormaliseError('payload.ack is missing');
      if (!ack) return [];
      return [
        {
          type: 'status',
          resolveBy: 'account',
          externalAccountId: session,
          externalMessageId: messageIdOf(p),
          status: ack,
          error: ack === 'failed' ? (optionalString(p.error) ?? 'the gateway reported an error') : undefined,
        },
      ];
    }
    return []; // session.status and other gateway events are not messages
  },
  send: sessionGatewaySend('whatsapp_session'),
};

/**
 * WAHA's `POST /api/sendText`, for `whatsapp_session` and `whatsapp_session.waha`; a reply with
 * a file goes to `POST /api/sendFile` `{session, chatId, file: {mimetype, filename, url}, caption}`,
 * and WAHA fetches the signed link (docs/attachments.md, "Outbound").
 */
export function sessionGatewaySend(key: IntegrationKey): NonNullable<ChannelAdapter['send']> {
  return async (target, credentials, { timeoutMs }) => {
    if (!credentials.apiBaseUrl) return noCredentials(key, { apiBaseUrl: credentials.apiBaseUrl });
    // Contacts are stored without the gateway's suffix (normalise strips `@c.us`); a handle
    // that already names a chat (`…@g.us`, `…@c.us`) is used as it is.
    const chat = { session: target.accountId, chatId: target.to.includes('@') ? target.to : `${target.to}@c.us` };
    const file = target.attachments?.[0];
    return postToProvider({
      key,
      url: apiUrl(credentials.apiBaseUrl, file ? '/api/sendFile' : '/api/sendText'),
      headers: credentials.accessToken ? { 'x-api-key': credentials.accessToken } : {},
      body: {
        json: file
          ? {
              ...chat,
              file: { mimetype: file.contentType, filename: file.filename, url: file.url },
              ...(target.text !== '' ? { caption: target.text } : {}),
            }
          : { ...chat, text: target.text },
      },
      timeoutMs,
      secrets: [credentials.accessToken],
      idField: 'id or id._serialized',
      readId: (body) => {
        if (!isObject(body)) return undefined;
        return isObject(body.id) ? optionalString(body.id._serialized) : optionalString(body.id);
      },
    });
  };
}
