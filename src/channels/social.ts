import type { IntegrationKey } from '../config.js';
import type { AttachmentKind, InboundAttachment, NormalisedEvent } from '../messaging/events.js';
import {
  arrayOf,
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
  type WebhookAdapter,
} from './channel.js';
import { apiUrl, META_GRAPH_API, postToProvider } from './provider-http.js';
import { metaMessagingType } from './reply-window.js';
import { noCredentials } from './send-outcome.js';

/**
 * Messenger (`social_one.native`) and Instagram (`social_two.native`) messaging: one adapter
 * configured twice. `x-hub-signature-256` must carry `sha256=` and an HMAC with `appSecret`;
 * a correct digest without the prefix is refused (docs/webhooks.md, "Integrations"). The account is `entry[].id`
 * (the page or Instagram account id); the contact is `messaging[].sender.id` (PSID / IGSID).
 * Replies: `POST {apiBaseUrl}/me/messages` with the page access token as Bearer (the token
 * names the page, so the account id is not in the request); the id is `message_id`.
 */
export function socialAdapter(key: IntegrationKey & `${string}.native`): WebhookAdapter {
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
            // Echoes are our own outbound messages seen again; they add nothing.
            if (item.message.is_echo === true) return;
            const sender = requireObject(item.sender, `entry[${i}].messaging[${j}].sender`);
            const media = attachmentsOf(item.message.attachments);
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
          }
          // `read` carries only a watermark, no message ids; it is not mapped to messages.
        });
      });
      return events;
    },
    async send(target, credentials, { timeoutMs, now = () => new Date() }) {
      if (!credentials.accessToken) return noCredentials(key, { accessToken: credentials.accessToken });
      // RESPONSE inside 24 h of the person's last message; after that a human agent's answer
      // carries the HUMAN_AGENT tag (docs/replies.md, "Reply windows").
      const tagging = metaMessagingType(target.lastInboundAt, now());
      return postToProvider({
        key,
        url: apiUrl(credentials.apiBaseUrl ?? META_GRAPH_API, '/me/messages'),
        headers: { authorization: `Bearer ${credentials.accessToken}` },
        body: { json: { recipient: { id: target.to }, ...tagging, message: { text: target.text } } },
        timeoutMs,
        secrets: [credentials.accessToken],
        idField: 'message_id',
        readId: (body) => (isObject(body) ? optionalString(body.message_id) : undefined),
      });
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
