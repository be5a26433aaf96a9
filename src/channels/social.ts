import type { IntegrationKey } from '../config.js';
import type { AttachmentKind, InboundAttachment, NormalisedEvent } from '../messaging/events.js';
import {
  arrayOf,
  type ChannelAdapter,
  header,
  hmacMatches,
  hubChallenge,
  isObject,
  lookup,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
} from './channel.js';
import { inTurn } from './media-send.js';
import { apiUrl, META_GRAPH_API, metaThrottled, postToProvider } from './provider-http.js';
import { metaMessagingType } from './reply-window.js';
import { noCredentials } from './send-outcome.js';

/** The Send API's attachment types; it has no sticker type, so a sticker goes as an image. */
const SEND_TYPES: Record<AttachmentKind, string> = { image: 'image', sticker: 'image', audio: 'audio', video: 'video', file: 'file' };

/**
 * Messenger (`social_one.native`) and Instagram (`social_two.native`) messaging: one adapter
 * configured twice. `x-hub-signature-256` must carry `sha256=` and an HMAC with `appSecret`;
 * a correct digest without the prefix is refused (docs/webhooks.md, "Integrations"). The account is `entry[].id`
 * (the page or Instagram account id); the contact is `messaging[].sender.id` (PSID / IGSID).
 * Replies: `POST {apiBaseUrl}/me/messages` with the page access token as Bearer (the token
 * names the page, so the account id is not in the request); the id is `message_id`. A file
 * goes by its signed link (`attachment.payload.url`), which Meta fetches.
 */
export function socialAdapter(key: IntegrationKey & `${string}.native`): ChannelAdapter {
  return {
    key,
    challenge: (query, _headers, cfg) => hubChallenge(query, cfg.webhookVerifyToken),
    verify: (body, headers, cfg) => signed(hmacMatches(header(headers, 'x-hub-signature-256'), body, cfg.appSecret, 'required')),
    eventName: (payload) => (isObject(payload) ? optionalString(payload.object) : undefined),
    normalise(payload) {
      const body = requireObject(payload, 'payload');
      const events: NormalisedEvent[] = [];
      arrayOf(body.entry, 'entry').forEach((rawEntry, i) => {
        const entry = requireObject(rawEntry, `entry[${i}]`);
        const account = requireString(entry.id, `entry[${i}].id`);
        arrayOf(entry.messaging, `entry[${i}].messaging`).forEach((rawItem, j) => {
          const item = requireObject(rawItem, `entry[${i}].messaging[${j}]`);
          const at = toDate(item.timestamp);
          if (isObject(item.message)) {
            // Echoes are our own outbound messages seen again, and an unsent (deleted) message
            // names one already stored or never seen; they add nothing.
            if (item.message.is_echo === true || item.message.is_deleted === true) return;
            const sender = requireObject(item.sender, `entry[${i}].messaging[${j}].sender`);
            const media = attachmentsOf(item.message.attachments);
            // Instagram marks a message its API cannot show (e.g. some shared content) unsupported.
            if (item.message.is_unsupported === true && media.text === '' && media.files.length === 0) media.text = '[unsupported]';
            events.push({
              type: 'message',
              externalAccountId: account,
              externalMessageId: requireString(item.message.mid, `entry[${i}].messaging[${j}].message.mid`),
              contact: { externalId: requireString(sender.id, `entry[${i}].messaging[${j}].sender.id`) },
              text: optionalString(item.message.text) ?? media.text,
              occurredAt: at,
              ...(media.files.length > 0 ? { attachments: media.files } : {}),
            });
          } else if (isObject(item.delivery)) {
            for (const mid of arrayOf(item.delivery.mids, 'delivery.mids')) {
              if (typeof mid === 'string')
                events.push({
                  type: 'status',
                  resolveBy: 'account',
                  externalAccountId: account,
                  externalMessageId: mid,
                  status: 'delivered',
                  occurredAt: at,
                });
            }
          } else if (isObject(item.read) && typeof item.read.mid === 'string') {
            // Instagram's seen receipt names the message; Messenger's `read` carries only a
            // watermark, no message id, and is not mapped to messages.
            events.push({
              type: 'status',
              resolveBy: 'account',
              externalAccountId: account,
              externalMessageId: item.read.mid,
              status: 'read',
              occurredAt: at,
            });
          }
        });
      });
      return events;
    },
    async send(target, credentials, { timeoutMs, now = () => new Date() }) {
      if (!credentials.accessToken) return noCredentials(key, { accessToken: credentials.accessToken });
      // RESPONSE inside 24 h of the person's last message; after that a human agent's answer
      // carries the HUMAN_AGENT tag (docs/replies.md, "Reply windows").
      const tagging = metaMessagingType(target.lastInboundAt, now());
      const token = credentials.accessToken;
      const post = (message: Record<string, unknown>) =>
        postToProvider({
          key,
          url: apiUrl(credentials.apiBaseUrl ?? META_GRAPH_API, '/me/messages'),
          headers: { authorization: `Bearer ${token}` },
          body: { json: { recipient: { id: target.to }, ...tagging, message } },
          timeoutMs,
          secrets: [token],
          idField: 'message_id',
          throttled: metaThrottled,
          readId: (body) => (isObject(body) ? optionalString(body.message_id) : undefined),
        });
      const file = target.attachments?.[0];
      if (!file) return post({ text: target.text });
      // The Send API carries a text or an attachment, never both: the text goes first as a
      // message of its own, and the attachment's id is the reply's (docs/attachments.md).
      const attachment = { type: SEND_TYPES[file.kind], payload: { url: file.url, is_reusable: false } };
      return inTurn([...(target.text !== '' ? [() => post({ text: target.text })] : []), () => post({ attachment })]);
    },
  };
}

/** The Send API's attachment types that carry a file at `payload.url`. */
const FILE_KINDS: Record<string, AttachmentKind> = { image: 'image', audio: 'audio', video: 'video', file: 'file' };

/**
 * A message's attachments: files on Meta's CDN (fetched without credentials, the URL itself
 * is the grant), and the types of those that carry no file (a shared location, a fallback
 * link), which stay in the text as `[location]`. A message whose attachments are all files has
 * empty text: they are its attachments.
 */
function attachmentsOf(attachments: unknown): { text: string; files: InboundAttachment[] } {
  const files: InboundAttachment[] = [];
  const others: string[] = [];
  for (const a of Array.isArray(attachments) ? attachments : []) {
    const payload = isObject(a) && isObject(a.payload) ? a.payload : {};
    const type = isObject(a) ? (optionalString(a.type) ?? 'file') : 'file';
    const url = optionalString(payload.url);
    const kind = payload.sticker_id !== undefined ? 'sticker' : lookup(FILE_KINDS, type);
    if (url && kind) files.push({ kind, source: { from: 'url', url, auth: 'none' } });
    else others.push(type);
  }
  return { text: others.length > 0 ? `[${others.join(', ')}]` : '', files };
}
