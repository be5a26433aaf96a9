import { randomUUID } from 'node:crypto';
import { attachVisitorUploads } from '../attachments/attachments.queries.js';
import { storeUpload } from '../attachments/upload.service.js';
import { runInboundRules } from '../automation/run-rules.js';
import { randomToken, sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { clientAddressKey } from '../http/client-address.js';
import { errors } from '../http/errors.js';
import { announce } from '../messaging/announce.js';
import { threadPreview } from '../messaging/announcements.js';
import { applyDeliveriesUnannounced } from '../messaging/apply-events.js';
import type { NormalisedEvent } from '../messaging/events.js';
import { enforceRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { settleHit } from '../rate-limits/rate-limits.queries.js';
import { setThreadPreview } from '../threads/threads.queries.js';
import {
  countRecentConversations,
  countRecentVisitorMessages,
  fillContactEmail,
  findHandleThread,
  findMessageByExternalId,
  insertVisitor,
  type Visitor,
  type Widget,
} from './livechat.queries.js';

/** docs/livechat.md: limits, per minute. */
export const LIVECHAT_LIMITS = {
  messagesPerVisitorPerMinute: 20,
  conversationsPerAddressPerMinute: 30,
} as const;
/** A visitor token works this long after its conversation started. */
export const VISITOR_TOKEN_DAYS = 30;
export const VISITOR_TOKEN_PREFIX = 'inbox_vt_';

const MINUTE_MS = 60_000;

/** Seconds until the oldest counted event leaves the one-minute window (at least 1). */
function retryAfter(oldest: Date | null, now: Date): number {
  return Math.max(1, Math.ceil(((oldest?.getTime() ?? now.getTime()) + MINUTE_MS - now.getTime()) / 1000));
}

export function hashVisitorToken(token: string): string {
  return sha256Hex(token);
}

/**
 * Applies a visitor's events through messaging, exactly as the webhook worker applies a
 * provider's (contact, thread, message), in the caller's transaction, without telling anyone
 * yet: the caller completes what was applied, then calls the answer's `tell` to announce it to
 * agents and endpoints and run the automation rules it fired, which so see it complete. There
 * is no inbox row: no provider retries.
 */
async function applyVisitorEvents(deps: Deps, trx: Executor, events: NormalisedEvent[], now: Date) {
  const { resolutions, changes, bare } = await applyDeliveriesUnannounced(
    deps,
    trx,
    [{ deliveryId: 'livechat', integrationKey: 'livechat', events }],
    now,
  );
  // The connection went away since the request began: nothing was applied.
  if (resolutions.get('livechat')?.error) throw errors.notFound('widget');
  return {
    tell: async () => {
      await announce(deps, trx, changes, now, { bare });
      await runInboundRules(deps, trx, changes, now);
    },
  };
}

/**
 * A visitor opens a conversation: its contact (named as the visitor says; an e-mail alone
 * names it too) and its open thread are made through messaging, and it gets a token, shown
 * this once and stored as a hash. At most LIVECHAT_LIMITS.conversationsPerAddressPerMinute
 * from one client address; the next gets 429 with retry-after.
 */
export async function startConversation(deps: Deps, widget: Widget, input: { name?: string; email?: string; ip: string }) {
  // The widget asks these before the first message; a visitor calling the API directly is held to it too.
  for (const field of ['name', 'email'] as const) {
    if (widget.livechat_pre_chat[field] && !input[field]?.trim())
      throw errors.validation(`${field} is required: this widget's pre-chat form asks for it`);
  }
  const token = randomToken(VISITOR_TOKEN_PREFIX, 32);
  const handle = randomUUID();
  const now = deps.now();
  // Counted per client address key (an IPv6 client by its /64), which is what is stored.
  const address = clientAddressKey(input.ip);
  const threadId = await deps.db.transaction().execute(async (trx) => {
    const recent = await countRecentConversations(trx, address, new Date(now.getTime() - MINUTE_MS));
    if (recent.n >= LIVECHAT_LIMITS.conversationsPerAddressPerMinute) {
      throw errors.rateLimited(
        retryAfter(recent.oldest, now),
        `at most ${LIVECHAT_LIMITS.conversationsPerAddressPerMinute} new conversations a minute from one address`,
      );
    }
    const name = input.name ?? input.email;
    const applied = await applyVisitorEvents(
      deps,
      trx,
      [{ type: 'conversation', externalAccountId: widget.external_account_id, contact: { externalId: handle, ...(name ? { name } : {}) } }],
      now,
    );
    const opened = await findHandleThread(trx, widget.id, widget.workspace_id, handle);
    if (!opened) throw new Error('the conversation just opened has no thread');
    if (input.email) await fillContactEmail(trx, opened.contact_id, input.email);
    await insertVisitor(trx, {
      workspaceId: widget.workspace_id,
      connectionId: widget.id,
      contactId: opened.contact_id,
      threadId: opened.thread_id,
      handle,
      tokenHash: hashVisitorToken(token),
      email: input.email ?? null,
      ip: address,
      createdAt: now,
      expiresAt: new Date(now.getTime() + VISITOR_TOKEN_DAYS * 24 * 3600 * 1000),
    });
    // Told once the conversation is complete: a `thread.created` rule reads the pre-chat e-mail.
    await applied.tell();
    return opened.thread_id;
  });
  return { visitorToken: token, threadId };
}

/** Visitors' uploads are limited like their messages: per visitor, per minute. */
const VISITOR_UPLOADS: RateLimit = {
  name: 'livechat-uploads',
  what: 'uploads of one visitor',
  limit: LIVECHAT_LIMITS.messagesPerVisitorPerMinute,
  windowMs: MINUTE_MS,
};

/** The bytes one widget takes from all its visitors in any hour (INBOX_LIVECHAT_UPLOAD_BYTES_PER_HOUR). */
const widgetUploadBytes = (limit: number): RateLimit => ({
  name: 'livechat-upload-bytes',
  what: "bytes of this widget's visitor uploads",
  limit,
  windowMs: 60 * MINUTE_MS,
});

/** The largest file a visitor may upload: INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES, never above INBOX_MAX_ATTACHMENT_BYTES. */
export function visitorMaxBytes(config: Deps['config']): number {
  return Math.min(config.livechatMaxAttachmentBytes, config.maxAttachmentBytes);
}

/**
 * A visitor uploads a file to send (docs/attachments.md): stored like a tenant's upload, and
 * remembered as this visitor's, so only this visitor may send it. Visitors are anonymous, so
 * before any byte is read (docs/security.md, "Visitors' files"): at most
 * LIVECHAT_LIMITS.messagesPerVisitorPerMinute uploads a minute per visitor, and the widget's
 * hourly byte budget must still hold what this file may be (429 with retry-after). The file
 * is stopped at visitorMaxBytes (413). The budget is reserved for the most the request can
 * carry (its declared length, else the limit), so parallel uploads cannot overrun it, and
 * settled to the bytes kept once the upload ends: a refused or failed one costs nothing.
 */
export async function uploadVisitorFile(
  deps: Deps,
  visitor: Visitor,
  file: { body: AsyncIterable<Uint8Array>; declaredType: string | undefined; filename: string | null },
  declaredLength: number | undefined,
) {
  const maxBytes = visitorMaxBytes(deps.config);
  const reserved = Math.min(declaredLength ?? maxBytes, maxBytes);
  const hit = await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    await enforceRateLimit(trx, VISITOR_UPLOADS, visitor.id, now);
    return enforceRateLimit(trx, widgetUploadBytes(deps.config.livechatUploadBytesPerHour), visitor.connection_id, now, reserved);
  });
  let kept = 0;
  try {
    const row = await storeUpload(deps, { workspaceId: visitor.workspace_id, visitorId: visitor.id, maxBytes, ...file });
    kept = row.size ?? 0;
    return row;
  } finally {
    // A settle that fails leaves the reservation counted: the budget errs on the safe side.
    await settleHit(deps.db, hit, kept).catch((err) =>
      deps.log.warn({ err }, 'could not settle a visitor upload against its widget budget'),
    );
  }
}

/**
 * A visitor writes: a `message` event on the widget's account from the visitor's handle,
 * applied through messaging like a provider delivery, so agents see it in /v1/threads, on
 * /v1/realtime and in outbound webhooks. At most LIVECHAT_LIMITS.messagesPerVisitorPerMinute
 * per visitor; the next gets 429 with retry-after. `attachmentIds` are the visitor's own
 * unused uploads: they are put on the message before it is announced, in the same
 * transaction, so every announcement of the message carries them; any other id → 422 and
 * nothing is written.
 */
export async function postVisitorMessage(
  deps: Deps,
  widget: Widget,
  visitor: Visitor,
  input: { text?: string | undefined; attachmentIds?: number[] | undefined },
) {
  const attachmentIds = [...new Set(input.attachmentIds ?? [])];
  if (input.text === undefined && attachmentIds.length === 0)
    throw errors.validation('send "text", at least one of "attachmentIds", or both');
  const now = deps.now();
  // The visitor's own id for the message; `lc-` keeps it apart from replies' ids (their numbers).
  const externalId = `lc-${randomUUID()}`;
  return deps.db.transaction().execute(async (trx) => {
    const recent = await countRecentVisitorMessages(trx, visitor, new Date(now.getTime() - MINUTE_MS));
    if (recent.n >= LIVECHAT_LIMITS.messagesPerVisitorPerMinute) {
      throw errors.rateLimited(retryAfter(recent.oldest, now), `at most ${LIVECHAT_LIMITS.messagesPerVisitorPerMinute} messages a minute`);
    }
    const event: NormalisedEvent = {
      type: 'message',
      externalAccountId: widget.external_account_id,
      externalMessageId: externalId,
      contact: { externalId: visitor.handle },
      text: input.text ?? '',
      occurredAt: now,
    };
    const { resolutions, changes } = await applyDeliveriesUnannounced(
      deps,
      trx,
      [{ deliveryId: 'livechat', integrationKey: 'livechat', events: [event] }],
      now,
    );
    if (resolutions.get('livechat')?.error) throw errors.notFound('widget');
    const message = await findMessageByExternalId(trx, widget.id, externalId);
    if (!message) throw new Error('the message just written is not there');
    const taken = await attachVisitorUploads(trx, visitor.id, attachmentIds, message.id, now);
    if (taken.length < attachmentIds.length) {
      const missing = attachmentIds.find((id) => !taken.some((t) => t.id === id));
      throw errors.validation(`attachmentIds: ${missing} is not an unused upload of this visitor`);
    }
    // Files alone: the thread's preview names them ("[image]"), as a provider's photo does; the
    // batch wrote it from the empty text, before the files were on the message.
    if (event.text === '' && taken.length > 0) {
      const preview = threadPreview(
        '',
        taken.map((t) => t.kind),
      );
      await setThreadPreview(trx, message.thread_id, preview);
      for (const c of changes)
        if (c.type === 'thread.updated' && c.thread.id === message.thread_id) c.thread.last_message_preview = preview;
    }
    await announce(deps, trx, changes, now);
    await runInboundRules(deps, trx, changes, now);
    return message;
  });
}
