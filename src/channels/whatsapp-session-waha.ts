import { hmacDigest, safeEqual } from '../crypto/hmac.js';
import type { InboundAttachment, MessageStatusEvent } from '../messaging/events.js';
import {
  type ChannelAdapter,
  header,
  isObject,
  lookup,
  NormaliseError,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
} from './channel.js';
import { kindOfType, mediaPlaceholder, withCaption } from './media-placeholder.js';
import { messageIdOf, STATUS_BROADCAST, sessionGatewaySend } from './whatsapp-session.js';

/** WAHA's ack enum: -1 ERROR, 0 PENDING (no news), 1 SERVER, 2 DEVICE, 3 READ, 4 PLAYED. */
const ACKS: Record<string, MessageStatusEvent> = { '1': 'sent', '2': 'delivered', '3': 'read', '4': 'read', '-1': 'failed' };

/** A WhatsApp id without its server part (`@c.us`, or `@s.whatsapp.net` on the NOWEB/GOWS engines). */
function handleOf(id: string): string {
  return id.replace(/@(c\.us|s\.whatsapp\.net)$/, '');
}

/**
 * The message's text and file. A media message's text is its caption (WAHA puts it in `body`)
 * and its file is `media.url`, downloaded with the API key (docs/attachments.md). A medium WAHA
 * did not download (no `media.url`: media downloads off, or its `media.error`) stays a
 * placeholder, `[image]`, `[audio]`…, before the caption.
 */
function messageContent(p: Record<string, unknown>, data: Record<string, unknown>): { text: string; attachments?: InboundAttachment[] } {
  const body = optionalString(p.body);
  if (p.hasMedia !== true) return { text: body ?? '' };
  const media = isObject(p.media) ? p.media : {};
  const url = optionalString(media.url);
  const contentType = optionalString(media.mimetype);
  if (!url) return { text: withCaption([mediaPlaceholder(contentType)], body) };
  const filename = optionalString(media.filename);
  const attachment: InboundAttachment = {
    kind: data.type === 'sticker' ? 'sticker' : kindOfType(contentType),
    ...(contentType ? { contentType } : {}),
    ...(filename ? { filename } : {}),
    source: { from: 'url', url, auth: 'api_key' },
  };
  return { text: body ?? '', attachments: [attachment] };
}

/**
 * WAHA's own webhook, `{ event, session, payload }`, as a stock WAHA server sends it with an
 * HMAC key set on the session: `message` and `message.ack` become the same events as the
 * `whatsapp_session` key's; contacts' status updates (`from: "status@broadcast"`) are
 * skipped. `X-Webhook-Hmac` is hex HMAC-SHA512(webhookSecret, raw body) with
 * `X-Webhook-Hmac-Algorithm: sha512`; nothing else is accepted (no sibling headers, no
 * SHA-256). The account is `session`. Replies: WAHA's `POST /api/sendText`, as the sibling's.
 */
export const whatsappSessionWahaAdapter: ChannelAdapter = {
  key: 'whatsapp_session.waha',
  challenge: () => null,
  verify(body, headers, cfg) {
    const signature = header(headers, 'x-webhook-hmac');
    const algorithm = header(headers, 'x-webhook-hmac-algorithm');
    if (!cfg.webhookSecret || signature === undefined || algorithm?.toLowerCase() !== 'sha512') return { ok: false };
    return signed(safeEqual(signature.toLowerCase(), hmacDigest('sha512', cfg.webhookSecret, body.bytes, 'hex')));
  },
  eventName: (payload) => (isObject(payload) ? optionalString(payload.event) : undefined),
  normalise(payload) {
    const body = requireObject(payload, 'payload');
    const event = requireString(body.event, 'event');
    const session = requireString(body.session, 'session');
    if (event !== 'message' && event !== 'message.ack') return []; // session.status and the like
    const p = requireObject(body.payload, 'payload.payload');
    const id = messageIdOf(p);
    if (event === 'message') {
      if (p.fromMe === true) return []; // sent from the phone itself
      const from = requireString(p.from, 'payload.from');
      // A contact's status update (a "story"), posted to all their contacts: not a conversation.
      if (from === STATUS_BROADCAST) return [];
      const data = isObject(p._data) ? p._data : {};
      return [
        {
          type: 'message',
          externalAccountId: session,
          externalMessageId: id,
          contact: {
            externalId: handleOf(from),
            name: optionalString(data.notifyName) ?? optionalString(data.pushName),
          },
          ...messageContent(p, data),
          occurredAt: toDate(p.timestamp),
        },
      ];
    }
    if (p.ack === undefined || p.ack === null) throw new NormaliseError('payload.ack is missing');
    const status = lookup(ACKS, String(p.ack));
    if (!status) return [];
    return [
      {
        type: 'status',
        resolveBy: 'account',
        externalAccountId: session,
        externalMessageId: id,
        status,
        error: status === 'failed' ? 'WAHA reported the message as not sent (ack ERROR)' : undefined,
      },
    ];
  },
  send: sessionGatewaySend('whatsapp_session.waha'),
};
