import type { AttachmentKind, InboundAttachment } from '../messaging/events.js';
import {
  type ChannelAdapter,
  header,
  isObject,
  NormaliseError,
  type OutboundAttachment,
  optionalString,
  requireObject,
  requireString,
  signed,
  toDate,
} from './channel.js';
import { inTurn, readAll } from './media-send.js';
import { apiUrl, postToProvider } from './provider-http.js';
import { noCredentials } from './send-outcome.js';

/** The Bot API's host; tests point `apiBaseUrl` at a server of their own. */
export const TELEGRAM_API = 'https://api.telegram.org';
/** What Telegram allows as a webhook secret token: 1–256 of `A-Z a-z 0-9 _ -`. */
export const TELEGRAM_SECRET = /^[A-Za-z0-9_-]{1,256}$/;
export const TELEGRAM_SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/**
 * Telegram Bot API updates as Telegram posts them (`{update_id, message | edited_message}`).
 * Telegram signs nothing: `setWebhook` gives it a secret that it sends back in
 * `X-Telegram-Bot-Api-Secret-Token`. Each bot connection has its own (set by
 * `POST /v1/connections/:id/telegram/webhook`), and since an update never says which bot it is
 * for, the secret is what names the connection: the verification's `account` (the bot's id),
 * stored with the delivery and read back here. A secret no connection has is refused.
 * A message's id is `<chat id>:<message_id>` (Telegram numbers messages per chat); the contact is
 * the chat (where replies go). A photo, document, voice note, audio, video or sticker is an
 * attachment read with `getFile`, and its caption is the text; a location, contact, poll…
 * is named in the text (`[location]`); service messages (someone joined, a pinned message)
 * are skipped. An edit arrives as a new message marked "(edited)", with its new text only
 * (an edit cannot change the file).
 * Replies: `POST {apiBaseUrl}/bot<token>/sendMessage {chat_id, text}`; a file by its signed link
 * with `sendPhoto`, `sendAudio`, `sendVideo`, `sendDocument` or `sendSticker`.
 */
export const telegramAdapter: ChannelAdapter = {
  key: 'telegram',
  challenge: () => null,
  async verify(_body, headers, _cfg, ctx) {
    const secret = header(headers, TELEGRAM_SECRET_HEADER);
    if (secret === undefined || !TELEGRAM_SECRET.test(secret) || !ctx.accountBySecret) return signed(false);
    const account = await ctx.accountBySecret('telegram', secret);
    return account === undefined ? signed(false) : { ok: true, via: 'signed', account };
  },
  eventName(payload) {
    if (!isObject(payload)) return undefined;
    return ['message', 'edited_message', 'channel_post', 'edited_channel_post', 'callback_query'].find((k) => k in payload);
  },
  normalise(payload, delivery) {
    const update = requireObject(payload, 'payload');
    const edited = update.edited_message !== undefined;
    const raw = edited ? update.edited_message : update.message;
    if (raw === undefined) return []; // channel posts, callbacks, polls…: not conversations
    const bot = delivery.account;
    if (!bot) throw new NormaliseError('the update names no bot: it was not accepted by a connection’s webhook secret');
    const where = edited ? 'edited_message' : 'message';
    const message = requireObject(raw, where);
    const chat = requireObject(message.chat, `${where}.chat`);
    const chatId = requireString(chat.id, `${where}.chat.id`);
    const messageId = requireString(message.message_id, `${where}.message_id`);
    const from = isObject(message.from) ? message.from : undefined;
    if (from?.is_bot === true || isServiceMessage(message)) return [];
    // An edit with neither text nor caption is a live location moving (Telegram sends one every
    // few seconds while it is shared) or a file replaced: no words changed, nothing to show.
    if (edited && typeof message.text !== 'string' && optionalString(message.caption) === undefined) return [];
    const text = messageText(message);
    const file = edited ? undefined : fileOf(message);
    return [
      {
        type: 'message',
        externalAccountId: bot,
        // An edit keeps its message_id: its edit date makes it a message of its own.
        externalMessageId: edited ? `${chatId}:${messageId}:edited:${optionalString(message.edit_date) ?? ''}` : `${chatId}:${messageId}`,
        contact: { externalId: chatId, ...nameOf(chat, from) },
        text: edited ? `(edited) ${text}` : text,
        occurredAt: toDate(edited ? (message.edit_date ?? message.date) : message.date),
        ...(file ? { attachments: [file] } : {}),
      },
    ];
  },
  async send(target, credentials, { timeoutMs }) {
    if (!credentials.accessToken) return noCredentials('telegram', { accessToken: credentials.accessToken });
    const token = credentials.accessToken;
    const call = (method: string, body: Record<string, unknown> | FormData) =>
      postToProvider({
        key: 'telegram',
        url: apiUrl(credentials.apiBaseUrl ?? TELEGRAM_API, `/bot${token}/${method}`),
        headers: {},
        body: body instanceof FormData ? { multipart: body } : { json: { chat_id: target.to, ...body } },
        timeoutMs,
        secrets: [token],
        idField: 'result.message_id',
        // Message ids are per chat; the stored id names the chat too, like inbound ones.
        readId: (body) => {
          const result = isObject(body) && isObject(body.result) ? body.result : undefined;
          const id = result ? optionalString(result.message_id) : undefined;
          const chat = result && isObject(result.chat) ? optionalString(result.chat.id) : undefined;
          return id === undefined ? undefined : `${chat ?? target.to}:${id}`;
        },
      });
    const file = target.attachments?.[0];
    if (!file) return call('sendMessage', { text: target.text });
    // Telegram fetches a photo, audio, video or sticker from its signed link; a sticker takes no
    // caption, so its text goes first as a message of its own (docs/attachments.md, "Outbound").
    // A document is uploaded instead: by URL Telegram takes only GIF, PDF and ZIP documents. So
    // is a file larger than Telegram fetches by URL (photos 5 MB, other files 20 MB), and a photo
    // larger than it takes as an upload (10 MB) goes as a document.
    const [method, field] = sendMethod(file);
    const captioned = method !== 'sendSticker';
    const caption = captioned && target.text !== '' ? { caption: target.text } : {};
    const send = async () => {
      const byUrl = method !== 'sendDocument' && file.size <= (method === 'sendPhoto' ? PHOTO_BY_URL : FILE_BY_URL);
      if (byUrl) return call(method, { [field]: file.url, ...caption });
      const form = new FormData();
      form.set('chat_id', target.to);
      if (caption.caption !== undefined) form.set('caption', caption.caption);
      form.set(field, new Blob([await readAll(await file.open())], { type: file.contentType }), file.filename);
      return call(method, form);
    };
    return inTurn([...(!captioned && target.text !== '' ? [() => call('sendMessage', { text: target.text })] : []), send]);
  },
};

/** The largest files the Bot API fetches by URL (core.telegram.org/bots/api#sending-files). */
const PHOTO_BY_URL = 5 * 1024 * 1024;
const FILE_BY_URL = 20 * 1024 * 1024;
/** The largest photo `sendPhoto` takes as an upload; a larger one goes as a document. */
const PHOTO_UPLOAD = 10 * 1024 * 1024;

/**
 * The Bot API method and its file field for a kind; a sticker must be WebP, else it goes as a
 * photo, and a photo over what `sendPhoto` takes goes as a document.
 */
function sendMethod(file: OutboundAttachment): [string, string] {
  if ((file.kind === 'image' || file.kind === 'sticker') && file.size > PHOTO_UPLOAD) return ['sendDocument', 'document'];
  switch (file.kind) {
    case 'image':
      return ['sendPhoto', 'photo'];
    case 'audio':
      return ['sendAudio', 'audio'];
    case 'video':
      return ['sendVideo', 'video'];
    case 'sticker':
      return file.contentType === 'image/webp' ? ['sendSticker', 'sticker'] : ['sendPhoto', 'photo'];
    case 'file':
      return ['sendDocument', 'document'];
  }
}

/** The Bot API's file-carrying fields, as attachment kinds (a document is a file, a voice note audio). */
const FILE_FIELDS: [field: string, kind: AttachmentKind][] = [
  // An animation (a GIF, sent as MP4) also comes as `document`, for old clients: it goes first.
  ['animation', 'video'],
  ['document', 'file'],
  ['voice', 'audio'],
  ['audio', 'audio'],
  ['video', 'video'],
  ['video_note', 'video'],
  ['sticker', 'sticker'],
];

/** The message's file: a photo's largest size, or the one file of a document, voice note…. */
function fileOf(message: Record<string, unknown>): InboundAttachment | undefined {
  if (Array.isArray(message.photo)) {
    const largest = message.photo.filter(isObject).at(-1);
    const fileId = largest ? optionalString(largest.file_id) : undefined;
    // Telegram re-encodes photos as JPEG.
    return fileId ? { kind: 'image', contentType: 'image/jpeg', source: { from: 'telegram_file', fileId } } : undefined;
  }
  for (const [field, kind] of FILE_FIELDS) {
    const f = message[field];
    if (!isObject(f)) continue;
    const fileId = optionalString(f.file_id);
    if (!fileId) return undefined;
    const contentType = optionalString(f.mime_type);
    const filename = optionalString(f.file_name);
    return {
      kind,
      ...(contentType ? { contentType } : {}),
      ...(filename ? { filename } : {}),
      source: { from: 'telegram_file', fileId },
    };
  }
  return undefined;
}

/** Kinds of message that carry no text or file, named in the text as `[venue]`, `[location]`…; a venue also has a location. */
const OTHER_KINDS = ['venue', 'location', 'contact', 'poll', 'dice', 'game', 'invoice', 'story', 'giveaway', 'paid_media'];

/**
 * Service messages: what happened in the chat (someone joined or left, a title, a pinned
 * message, a group became a supergroup…), not something a person wrote.
 */
const SERVICE_FIELDS = [
  'new_chat_members',
  'left_chat_member',
  'new_chat_title',
  'new_chat_photo',
  'delete_chat_photo',
  'group_chat_created',
  'supergroup_chat_created',
  'channel_chat_created',
  'message_auto_delete_timer_changed',
  'migrate_to_chat_id',
  'migrate_from_chat_id',
  'pinned_message',
  'forum_topic_created',
  'forum_topic_edited',
  'forum_topic_closed',
  'forum_topic_reopened',
  'general_forum_topic_hidden',
  'general_forum_topic_unhidden',
  'video_chat_scheduled',
  'video_chat_started',
  'video_chat_ended',
  'video_chat_participants_invited',
  'write_access_allowed',
  'proximity_alert_triggered',
  'chat_background_set',
  'boost_added',
];

/** Whether the message is a service message (and has no text of its own). */
function isServiceMessage(message: Record<string, unknown>): boolean {
  return typeof message.text !== 'string' && SERVICE_FIELDS.some((field) => message[field] !== undefined);
}

/** The text, or a media message's caption (empty when none); other kinds (a location, a poll) say what they are. */
function messageText(message: Record<string, unknown>): string {
  if (typeof message.text === 'string') return message.text;
  const caption = optionalString(message.caption);
  if (message.photo !== undefined || FILE_FIELDS.some(([field]) => isObject(message[field]))) return caption ?? '';
  const kind = OTHER_KINDS.find((field) => message[field] !== undefined);
  return caption ?? (kind ? `[${kind}]` : '[unsupported message]');
}

/** The contact's name: the person's for a private chat, the group's title otherwise. */
function nameOf(chat: Record<string, unknown>, from: Record<string, unknown> | undefined): { name?: string } {
  const title = optionalString(chat.title);
  if (title) return { name: title };
  const person = from ?? chat;
  const name =
    [optionalString(person.first_name), optionalString(person.last_name)].filter(Boolean).join(' ') || optionalString(person.username);
  return name ? { name } : {};
}
