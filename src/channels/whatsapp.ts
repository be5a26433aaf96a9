import { safeEqual } from '../crypto/hmac.js';
import { parseJson } from '../http/raw-body.js';
import type { AttachmentKind, InboundAttachment, MessageStatusEvent, NormalisedEvent } from '../messaging/events.js';
import {
  arrayOf,
  type ChannelAdapter,
  header,
  hmacMatches,
  hubChallenge,
  isObject,
  lookup,
  NormaliseError,
  type OutboundAttachment,
  optionalString,
  requireObject,
  requireString,
  type SendOutcome,
  signed,
  toDate,
} from './channel.js';
import { inTurn, readAll } from './media-send.js';
import { apiUrl, META_GRAPH_API, metaThrottled, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

const STATUSES: Record<string, MessageStatusEvent> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed' };
/**
 * Statuses WhatsApp sends that say nothing about delivery: `deleted` (the message was deleted)
 * and `warning` (an item of a catalog message has a problem). They change no message.
 */
const NO_NEWS = new Set(['deleted', 'warning']);

/**
 * WhatsApp Cloud API. The body must be JSON (a non-JSON body is refused before any secret is
 * looked at). Then (a) `x-vendor-auth` equal to `providerReportSecret` accepts a delivery
 * report; else (b) `x-hub-signature-256` must be `sha256=` + HMAC with `webhookSecret`.
 * The challenge compares `hub.verify_token` with `webhookSecret`. The account is
 * `entry[].changes[].value.metadata.phone_number_id`.
 * Replies: `POST {apiBaseUrl}/{phone_number_id}/messages` with the access token as Bearer; the
 * id is `messages[0].id` (the `wamid` that later `statuses` name), and `contacts[0].wa_id` the id
 * WhatsApp knows the recipient by, which the contact's messages come from (it may differ from
 * the number written to: Brazil's ninth digit, Mexico's `521`). A template reply sends its
 * stored `template` object as is (docs/replies.md, "Templates"). A file is uploaded to
 * `/{phone_number_id}/media` and sent by its media id, the text as its caption
 * (docs/attachments.md, "Outbound").
 */
export const whatsappAdapter: ChannelAdapter = {
  key: 'whatsapp',
  challenge: (query, _headers, cfg) => hubChallenge(query, cfg.webhookSecret),
  verify(body, headers, cfg) {
    const payload = parseJson(body.text);
    if (payload === undefined) return { ok: false, reason: 'webhook body is not JSON' };
    const reportAuth = header(headers, 'x-vendor-auth');
    if (cfg.providerReportSecret && reportAuth !== undefined && safeEqual(reportAuth, cfg.providerReportSecret)) {
      return { ok: true, via: 'report_secret', payload };
    }
    return signed(hmacMatches(header(headers, 'x-hub-signature-256'), body, cfg.webhookSecret, 'required'), payload);
  },
  eventName(payload) {
    if (!isObject(payload) || !Array.isArray(payload.entry)) return undefined;
    const change = isObject(payload.entry[0]) && Array.isArray(payload.entry[0].changes) ? payload.entry[0].changes[0] : undefined;
    if (!isObject(change) || !isObject(change.value)) return undefined;
    if (Array.isArray(change.value.statuses)) return 'statuses';
    if (Array.isArray(change.value.messages)) return 'messages';
    return optionalString(change.field);
  },
  // The happy path checks each part in place and names it only when it is wrong: the names
  // (`entry[0].changes[0].value.messages[0].from`…) made eagerly were a dozen strings a
  // delivery, thrown away unread. A wrong part goes to the same require… helper, which throws.
  normalise(payload) {
    const body = requireObject(payload, 'payload');
    const events: NormalisedEvent[] = [];
    const entries = Array.isArray(body.entry) ? body.entry : arrayOf(body.entry, 'entry');
    for (let i = 0; i < entries.length; i++) {
      const rawEntry: unknown = entries[i];
      const entry = isObject(rawEntry) ? rawEntry : requireObject(rawEntry, `entry[${i}]`);
      const changes = Array.isArray(entry.changes) ? entry.changes : arrayOf(entry.changes, `entry[${i}].changes`);
      for (let j = 0; j < changes.length; j++) {
        const rawChange: unknown = changes[j];
        const change = isObject(rawChange) ? rawChange : requireObject(rawChange, `entry[${i}].changes[${j}]`);
        if (change.field !== undefined && change.field !== 'messages') continue;
        const value = isObject(change.value) ? change.value : requireObject(change.value, `entry[${i}].changes[${j}].value`);
        const metadata = isObject(value.metadata)
          ? value.metadata
          : requireObject(value.metadata, `entry[${i}].changes[${j}].value.metadata`);
        const account =
          presentString(metadata.phone_number_id) ??
          requireString(metadata.phone_number_id, `entry[${i}].changes[${j}].value.metadata.phone_number_id`);
        const names = new Map<string, string>();
        for (const c of Array.isArray(value.contacts)
          ? value.contacts
          : arrayOf(value.contacts, `entry[${i}].changes[${j}].value.contacts`)) {
          if (isObject(c) && typeof c.wa_id === 'string' && isObject(c.profile) && typeof c.profile.name === 'string')
            names.set(c.wa_id, c.profile.name);
        }
        const messages = Array.isArray(value.messages)
          ? value.messages
          : arrayOf(value.messages, `entry[${i}].changes[${j}].value.messages`);
        for (let k = 0; k < messages.length; k++) {
          const rawMessage: unknown = messages[k];
          const m = isObject(rawMessage) ? rawMessage : requireObject(rawMessage, `entry[${i}].changes[${j}].value.messages[${k}]`);
          const from = presentString(m.from) ?? requireString(m.from, `entry[${i}].changes[${j}].value.messages[${k}].from`);
          events.push({
            type: 'message',
            externalAccountId: account,
            externalMessageId: presentString(m.id) ?? requireString(m.id, `entry[${i}].changes[${j}].value.messages[${k}].id`),
            contact: { externalId: from, name: names.get(from) },
            text: messageText(m),
            occurredAt: toDate(m.timestamp),
            ...mediaOf(m),
          });
        }
        const statuses = Array.isArray(value.statuses)
          ? value.statuses
          : arrayOf(value.statuses, `entry[${i}].changes[${j}].value.statuses`);
        for (let k = 0; k < statuses.length; k++) {
          const rawStatus: unknown = statuses[k];
          const s = isObject(rawStatus) ? rawStatus : requireObject(rawStatus, `entry[${i}].changes[${j}].value.statuses[${k}]`);
          const name = presentString(s.status) ?? requireString(s.status, `entry[${i}].changes[${j}].value.statuses[${k}].status`);
          if (NO_NEWS.has(name)) continue;
          const status = lookup(STATUSES, name);
          if (!status)
            throw new NormaliseError(`entry[${i}].changes[${j}].value.statuses[${k}].status "${String(s.status)}" is not a known status`);
          events.push({
            type: 'status',
            resolveBy: 'account',
            externalAccountId: account,
            externalMessageId: presentString(s.id) ?? requireString(s.id, `entry[${i}].changes[${j}].value.statuses[${k}].id`),
            status,
            error: status === 'failed' ? describeErrors(s.errors) : undefined,
            occurredAt: toDate(s.timestamp),
          });
        }
      }
    }
    return events;
  },
  async send(target, credentials, { timeoutMs }) {
    if (!credentials.accessToken) return noCredentials('whatsapp', { accessToken: credentials.accessToken });
    const token = credentials.accessToken;
    const base = credentials.apiBaseUrl ?? META_GRAPH_API;
    const post = (message: Record<string, unknown>) =>
      postToProvider({
        key: 'whatsapp',
        url: apiUrl(base, `/${encodeURIComponent(target.accountId)}/messages`),
        headers: { authorization: `Bearer ${token}` },
        body: { json: { messaging_product: 'whatsapp', recipient_type: 'individual', to: target.to, ...message } },
        timeoutMs,
        secrets: [token],
        idField: 'messages[0].id',
        throttled: metaThrottled,
        readId: (body) =>
          isObject(body) && Array.isArray(body.messages) && isObject(body.messages[0]) ? optionalString(body.messages[0].id) : undefined,
        // Only an id other than the one written to is news (SendOutcome's recipientId).
        readRecipient: (body) => {
          const waId =
            isObject(body) && Array.isArray(body.contacts) && isObject(body.contacts[0])
              ? optionalString(body.contacts[0].wa_id)
              : undefined;
          return waId === target.to ? undefined : waId;
        },
      });
    const file = target.attachments?.[0];
    if (!file)
      return post(
        target.template === undefined ? { type: 'text', text: { body: target.text } } : { type: 'template', template: target.template },
      );
    // The file is uploaded first; the message names the media id WhatsApp gives it.
    const uploaded = await uploadMedia(base, target.accountId, token, file, timeoutMs);
    if (uploaded.outcome !== 'sent') return uploaded;
    const type = mediaType(file);
    const captioned = type === 'image' || type === 'video' || type === 'document';
    const media = {
      id: uploaded.externalId,
      ...(captioned && target.text !== '' ? { caption: target.text } : {}),
      ...(type === 'document' ? { filename: file.filename } : {}),
    };
    // Audio and stickers take no caption: the text goes first, as a message of its own.
    return inTurn([
      ...(!captioned && target.text !== '' ? [() => post({ type: 'text', text: { body: target.text } })] : []),
      () => post({ type, [type]: media }),
    ]);
  },
};

/** Cloud API's media message types, as the attachment kinds they become (a document is a file). */
const MEDIA_KINDS: Record<string, AttachmentKind> = {
  image: 'image',
  audio: 'audio',
  video: 'video',
  document: 'file',
  sticker: 'sticker',
};

/** A media message's file: its media id, read later with the Graph API (docs/attachments.md). */
function mediaOf(m: Record<string, unknown>): { attachments?: InboundAttachment[] } {
  const type = optionalString(m.type) ?? '';
  const kind = lookup(MEDIA_KINDS, type);
  const media = m[type];
  const mediaId = isObject(media) ? optionalString(media.id) : undefined;
  if (!kind || !isObject(media) || !mediaId) return {};
  const contentType = optionalString(media.mime_type);
  const filename = optionalString(media.filename);
  return {
    attachments: [
      { kind, ...(contentType ? { contentType } : {}), ...(filename ? { filename } : {}), source: { from: 'whatsapp_media', mediaId } },
    ],
  };
}

/**
 * The types the Cloud API takes as an image, audio or video message (Meta's "supported media
 * types"); any other file of those kinds (a GIF, an SVG, a WAV, a QuickTime video) would be
 * refused there, so it goes as a document, which takes any type.
 */
const MEDIA_TYPES: Record<'image' | 'audio' | 'video', ReadonlySet<string>> = {
  image: new Set(['image/jpeg', 'image/png']),
  audio: new Set(['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg']),
  video: new Set(['video/mp4', 'video/3gpp']),
};

/** The most the Cloud API takes as an image (5 MB) or audio and video (16 MB); a document takes 100 MB. */
const MEDIA_MAX_BYTES: Record<'image' | 'audio' | 'video', number> = {
  image: 5 * 1024 * 1024,
  audio: 16 * 1024 * 1024,
  video: 16 * 1024 * 1024,
};

/**
 * The Cloud API's message type for a file: a sticker must be WebP (any other goes as an
 * image), an image, audio or video of a type WhatsApp does not play, or larger than it takes
 * for that type, goes as a document.
 */
function mediaType(file: OutboundAttachment): 'image' | 'audio' | 'video' | 'document' | 'sticker' {
  const kind = file.kind === 'sticker' && file.contentType === 'image/webp' ? 'sticker' : file.kind === 'sticker' ? 'image' : file.kind;
  if (kind === 'sticker') return kind;
  if (kind === 'file') return 'document';
  const type = file.contentType.split(';')[0]!.trim().toLowerCase();
  return MEDIA_TYPES[kind].has(type) && file.size <= MEDIA_MAX_BYTES[kind] ? kind : 'document';
}

/**
 * `POST {apiBaseUrl}/{phone_number_id}/media`, multipart `file`, `type` (the MIME type) and
 * `messaging_product=whatsapp`; the answer's `id` is the media id (an outcome's `externalId`
 * here). The file is read into memory to make the part: WhatsApp takes up to 100 MB, but our
 * own cap (INBOX_MAX_ATTACHMENT_BYTES, 25 MB by default) bounds what is held.
 */
async function uploadMedia(
  base: string,
  accountId: string,
  token: string,
  file: OutboundAttachment,
  timeoutMs: number,
): Promise<SendOutcome> {
  const form = new FormData();
  form.set('messaging_product', 'whatsapp');
  form.set('type', file.contentType);
  form.set('file', new Blob([await readAll(await file.open())], { type: file.contentType }), file.filename);
  return postToProvider({
    key: 'whatsapp media upload',
    url: apiUrl(base, `/${encodeURIComponent(accountId)}/media`),
    headers: { authorization: `Bearer ${token}` },
    body: { multipart: form },
    timeoutMs,
    secrets: [token],
    idField: 'id',
    throttled: metaThrottled,
    readId: (body) => (isObject(body) ? optionalString(body.id) : undefined),
  });
}

/** `v` when requireString would take it as it is (a non-empty string); otherwise requireString decides. */
function presentString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function messageText(m: Record<string, unknown>): string {
  if (isObject(m.text) && typeof m.text.body === 'string') return m.text.body;
  const type = optionalString(m.type) ?? 'unknown';
  const media = m[type];
  if (isObject(media) && typeof media.caption === 'string') return media.caption;
  // A media message's caption is its text, empty when it has none: the file is its attachment.
  if (lookup(MEDIA_KINDS, type) && isObject(media) && optionalString(media.id)) return '';
  if (type === 'button' && isObject(m.button) && typeof m.button.text === 'string') return m.button.text;
  if (type === 'interactive' && isObject(m.interactive)) {
    const reply = m.interactive.button_reply ?? m.interactive.list_reply;
    if (isObject(reply) && typeof reply.title === 'string') return reply.title;
  }
  return `[${type}]`;
}

function describeErrors(errors: unknown): string {
  if (!Array.isArray(errors) || errors.length === 0) return 'failed (no error given)';
  return errors
    .map((e) =>
      isObject(e) ? [optionalString(e.code), optionalString(e.title), optionalString(e.message)].filter(Boolean).join(': ') : String(e),
    )
    .join('; ');
}
