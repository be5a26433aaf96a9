import { safeEqual } from '../crypto/hmac.js';
import { arrayOf, firstHeader, isObject, NormaliseError, optionalString, requireObject, requireString, toDate, signed, type WebhookAdapter } from './channel.js';
import type { NormalisedEvent } from '../messaging/events.js';

/**
 * Inbound e-mail and delivery events from the mail provider, in the format documented in
 * docs/webhooks.md (`{ "events": [...] }`, one event, or an array). Authenticated by a plain
 * shared secret: `x-vendor-auth`, else `x-service-signature`, must equal `webhookSecret`.
 * Nothing ties the secret to the body, so it is a bearer credential (SPEC §5.2 rule 6).
 * The account is the receiving address (`to`) of inbound mail and the sending address
 * (`account`) of delivery events.
 */
export const emailAdapter: WebhookAdapter = {
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
      const messageId = requireString(e.messageId, `${where}.messageId`);
      const at = toDate(e.timestamp);
      switch (type) {
        case 'inbound': {
          const from = requireObject(e.from, `${where}.from`);
          const subject = optionalString(e.subject);
          const text = optionalString(e.text) ?? '';
          return [{
            type: 'message',
            externalAccountId: requireString(e.to, `${where}.to`).toLowerCase(),
            externalMessageId: messageId,
            contact: { externalId: requireString(from.email, `${where}.from.email`).toLowerCase(), name: optionalString(from.name) },
            text: subject ? `${subject}\n\n${text}` : text,
            occurredAt: at,
          }];
        }
        case 'bounce':
        case 'dropped':
        case 'complaint':
          return [{
            type: 'status',
            externalAccountId: requireString(e.account, `${where}.account`).toLowerCase(),
            externalMessageId: messageId,
            status: 'failed',
            error: `${type}: ${optionalString(e.reason) ?? 'no reason given'}`,
            occurredAt: at,
          }];
        case 'delivered':
        case 'open':
          return [{
            type: 'status',
            externalAccountId: requireString(e.account, `${where}.account`).toLowerCase(),
            externalMessageId: messageId,
            status: type === 'open' ? 'read' : 'delivered',
            occurredAt: at,
          }];
        default:
          throw new NormaliseError(`${where}.type "${type}" is not one of inbound, bounce, dropped, complaint, delivered, open`);
      }
    });
  },
};
