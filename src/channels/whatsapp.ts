import { safeEqual } from '../crypto/hmac.js';
import { parseJson } from '../http/raw-body.js';
import type { AttachmentKind, InboundAttachment, MessageStatusEvent, NormalisedEvent } from '../messaging/events.js';
import {
  arrayOf,
  header,
  hmacMatches,
  hubChallenge,
  isObject,
  lookup,
  NormaliseError,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
  type WebhookAdapter,
} from './channel.js';
import { apiUrl, META_GRAPH_API, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

const STATUSES: Record<string, MessageStatusEvent> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed' };

/**
 * WhatsApp Cloud API. The body must be JSON (a non-JSON body is refused before any secret is
 * looked at). Then (a) `x-vendor-auth` equal to `providerReportSecret` accepts a delivery
 * report; else (b) `x-hub-signature-256` must be `sha256=` + HMAC with `webhookSecret`.
 * The challenge compares `hub.verify_token` with `webhookSecret`. The account is
 * `entry[].changes[].value.metadata.phone_number_id`.
 * Replies: `POST {apiBaseUrl}/{phone_number_id}/messages` with the access token as Bearer; the
 * id is `messages[0].id` (the `wamid` that later `statuses` name). A template reply sends its
 * stored `template` object as is (docs/replies.md, "Templates").
 */
export const whatsappAdapter: WebhookAdapter = {
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
  normalise(payload) {
    const body = requireObject(payload, 'payload');
    const events: NormalisedEvent[] = [];
    arrayOf(body.entry, 'entry').forEach((rawEntry, i) => {
      const entry = requireObject(rawEntry, `entry[${i}]`);
      arrayOf(entry.changes, `entry[${i}].changes`).forEach((rawChange, j) => {
        const where = `entry[${i}].changes[${j}]`;
        const change = requireObject(rawChange, where);
        if (change.field !== undefined && change.field !== 'messages') return;
        const value = requireObject(change.value, `${where}.value`);
        const metadata = requireObject(value.metadata, `${where}.value.metadata`);
        const account = requireString(metadata.phone_number_id, `${where}.value.metadata.phone_number_id`);
        const names = new Map<string, string>();
        for (const c of arrayOf(value.contacts, `${where}.value.contacts`)) {
          if (isObject(c) && typeof c.wa_id === 'string' && isObject(c.profile) && typeof c.profile.name === 'string')
            names.set(c.wa_id, c.profile.name);
        }
        arrayOf(value.messages, `${where}.value.messages`).forEach((rawMessage, k) => {
          const m = requireObject(rawMessage, `${where}.value.messages[${k}]`);
          const from = requireString(m.from, `${where}.value.messages[${k}].from`);
          events.push({
            type: 'message',
            externalAccountId: account,
            externalMessageId: requireString(m.id, `${where}.value.messages[${k}].id`),
            contact: { externalId: from, name: names.get(from) },
            text: messageText(m),
            occurredAt: toDate(m.timestamp),
            ...mediaOf(m),
          });
        });
        arrayOf(value.statuses, `${where}.value.statuses`).forEach((rawStatus, k) => {
          const s = requireObject(rawStatus, `${where}.value.statuses[${k}]`);
          const status = lookup(STATUSES, requireString(s.status, `${where}.value.statuses[${k}].status`));
          if (!status) throw new NormaliseError(`${where}.value.statuses[${k}].status "${String(s.status)}" is not a known status`);
          events.push({
            type: 'status',
            resolveBy: 'account',
            externalAccountId: account,
            externalMessageId: requireString(s.id, `${where}.value.statuses[${k}].id`),
            status,
            error: status === 'failed' ? describeErrors(s.errors) : undefined,
            occurredAt: toDate(s.timestamp),
          });
        });
      });
    });
    return events;
  },
  async send(target, credentials, { timeoutMs }) {
    if (!credentials.accessToken) return noCredentials('whatsapp', { accessToken: credentials.accessToken });
    return postToProvider({
      key: 'whatsapp',
      url: apiUrl(credentials.apiBaseUrl ?? META_GRAPH_API, `/${encodeURIComponent(target.accountId)}/messages`),
      headers: { authorization: `Bearer ${credentials.accessToken}` },
      body: {
        json: {
          messaging_product: 'whatsapp',
          recipient_type: 'individual',
          to: target.to,
          ...(target.template === undefined
            ? { type: 'text', text: { body: target.text } }
            : { type: 'template', template: target.template }),
        },
      },
      timeoutMs,
      secrets: [credentials.accessToken],
      idField: 'messages[0].id',
      readId: (body) =>
        isObject(body) && Array.isArray(body.messages) && isObject(body.messages[0]) ? optionalString(body.messages[0].id) : undefined,
    });
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
