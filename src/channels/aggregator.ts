import type { MessageStatusEvent, NormalisedEvent } from '../messaging/events.js';
import {
  arrayOf,
  type ChannelAdapter,
  firstHeader,
  hmacMatches,
  isObject,
  lookup,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
} from './channel.js';
import { apiUrl, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

const SIGNATURE_HEADERS = ['x-aggregator-signature', 'x-hub-signature-256', 'x-signature'] as const;
const STATUSES: Record<string, MessageStatusEvent> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed' };

/**
 * A messaging aggregator in the format documented in docs/webhooks.md: one event, or
 * `{ "events": [...] }`, each `{ event, accountId, data }`. Signed with HMAC-SHA256 of
 * `webhookSecret` in the first present of `x-aggregator-signature`, `x-hub-signature-256`,
 * `x-signature`; a `sha256=` prefix is stripped when present and tolerated when absent.
 * No subscription handshake. Replies: `POST {apiBaseUrl}/messages` with the access token as
 * Bearer, `{accountId, to, text}`; the id is `id`. There is no default host: each aggregator
 * deployment names its own.
 */
export const aggregatorAdapter: ChannelAdapter = {
  key: 'aggregator',
  challenge: () => null,
  verify: (body, headers, cfg) => signed(hmacMatches(firstHeader(headers, SIGNATURE_HEADERS), body, cfg.webhookSecret, 'optional')),
  eventName(payload) {
    if (!isObject(payload)) return undefined;
    if (Array.isArray(payload.events)) return isObject(payload.events[0]) ? optionalString(payload.events[0].event) : undefined;
    return optionalString(payload.event);
  },
  normalise(payload) {
    const body = requireObject(payload, 'payload');
    const list = Array.isArray(body.events) ? arrayOf(body.events, 'events') : [body];
    return list.flatMap((raw, i): NormalisedEvent[] => {
      const where = Array.isArray(body.events) ? `events[${i}]` : 'payload';
      const e = requireObject(raw, where);
      const event = requireString(e.event, `${where}.event`);
      const account = requireString(e.accountId, `${where}.accountId`);
      const data = requireObject(e.data, `${where}.data`);
      switch (event) {
        case 'message.received': {
          const from = requireObject(data.from, `${where}.data.from`);
          return [
            {
              type: 'message',
              externalAccountId: account,
              externalMessageId: requireString(data.id, `${where}.data.id`),
              contact: { externalId: requireString(from.id, `${where}.data.from.id`), name: optionalString(from.name) },
              text: optionalString(data.text) ?? '',
              occurredAt: toDate(data.timestamp),
            },
          ];
        }
        case 'message.status': {
          const status = lookup(STATUSES, requireString(data.status, `${where}.data.status`));
          // queued, accepted…: nothing new for the inbox (as the `sms` key's).
          if (!status) return [];
          const error = isObject(data.error)
            ? [optionalString(data.error.code), optionalString(data.error.message)].filter(Boolean).join(': ')
            : undefined;
          return [
            {
              type: 'status',
              resolveBy: 'account',
              externalAccountId: account,
              externalMessageId: requireString(data.id, `${where}.data.id`),
              status,
              error,
              occurredAt: toDate(data.timestamp),
            },
          ];
        }
        default:
          return []; // other aggregator events carry nothing for the inbox
      }
    });
  },
  async send(target, credentials, { timeoutMs }) {
    const { apiBaseUrl, accessToken } = credentials;
    if (!apiBaseUrl || !accessToken) return noCredentials('aggregator', { apiBaseUrl, accessToken });
    return postToProvider({
      key: 'aggregator',
      url: apiUrl(apiBaseUrl, '/messages'),
      headers: { authorization: `Bearer ${accessToken}` },
      body: { json: { accountId: target.accountId, to: target.to, text: target.text } },
      timeoutMs,
      secrets: [accessToken],
      idField: 'id',
      readId: (body) => (isObject(body) ? optionalString(body.id) : undefined),
    });
  },
};
