/**
 * The event contract between the channels and messaging: what a provider delivery means,
 * independent of the provider. Channel adapters produce these; messaging applies them.
 */

import type { EmailHeaders } from '../db/types.js';
import { ENDPOINT_CHANGE_TYPES } from './announcements.js';

export type { EmailHeaders, MailAddress } from '../db/types.js';

export type MessageStatusEvent = 'sent' | 'delivered' | 'read' | 'failed';

export type NormalisedEvent =
  | {
      type: 'message';
      /** The provider's id of the receiving account (phone-number id, page id, …). */
      externalAccountId: string;
      externalMessageId: string;
      contact: { externalId: string; name?: string };
      text: string;
      occurredAt?: Date;
      /**
       * Provider ids of the messages this one answers, nearest first (an e-mail's In-Reply-To,
       * then its References from the last): the message joins the thread of the first one
       * known on its connection, else the contact's open thread.
       */
      references?: string[];
      /**
       * Files the message carries (docs/attachments.md). The message is written at once with
       * each one `pending`; a fetch-media job then reads the bytes from `source`.
       */
      attachments?: InboundAttachment[];
      /**
       * An e-mail's headers: the message then threads per conversation (a reference to a thread
       * of its sender joins it, anything else opens a new one) instead of per contact.
       */
      email?: EmailHeaders;
      /** An e-mail's HTML part, already sanitized (channels/email-html.ts). */
      html?: string;
      /** The quoted history and signature cut from an e-mail's `text`. */
      quotedText?: string;
      /**
       * A delivery report that an e-mail could not be delivered: the Message-ID of the mail it
       * returns, why, and to whom. When that mail is a reply of the connection to that
       * recipient, the reply fails with `error` and no message is written (./own-mail.ts); else
       * the report is a message.
       */
      bounceOf?: { externalMessageId: string; error: string; recipient?: string };
    }
  | {
      /**
       * A contact opened a conversation before writing anything (a live chat visitor): its
       * contact and open thread exist from now on, so the thread can be named at once.
       */
      type: 'conversation';
      externalAccountId: string;
      contact: { externalId: string; name?: string };
      occurredAt?: Date;
    }
  | StatusEvent;

export type AttachmentKind = 'image' | 'audio' | 'video' | 'sticker' | 'file';

/** An inbound file as the provider announced it; the type is read again from the bytes. */
export interface InboundAttachment {
  kind: AttachmentKind;
  /** The type the sender declared, if any; trusted only until the bytes say otherwise. */
  contentType?: string;
  filename?: string;
  source: MediaSource;
}

/**
 * Where an inbound attachment's bytes are. `whatsapp_media`: WhatsApp Cloud's media id, read
 * with `GET {apiBaseUrl}/{mediaId}` (Bearer) → `{ url }`, then `GET url` (Bearer). `url`: a
 * download with the connection's credentials as `auth` says (Meta's CDN needs none, WAHA takes
 * `X-Api-Key`, Twilio basic auth). `delivery`: the `index`-th file inside the delivery itself
 * (an e-mail's MIME attachments), read again from the stored raw body; `cid`, the part's
 * Content-ID, which the mail's HTML names as `cid:` (an inline image). `telegram_file`: a Bot
 * API `file_id`, read with `getFile` → `file_path`, then `GET {apiBaseUrl}/file/bot<token>/<path>`.
 */
export type MediaSource =
  | { from: 'whatsapp_media'; mediaId: string }
  | { from: 'url'; url: string; auth: 'none' | 'bearer' | 'basic' | 'api_key' }
  | { from: 'delivery'; index: number; cid?: string }
  | { from: 'telegram_file'; fileId: string };

/**
 * A receipt for an outbound message. `resolveBy` says how it finds the message's connection:
 * `account`, through the connection of `externalAccountId` on the delivery's integration (a
 * signed delivery); `sent_message`, through the message this integration already sent with
 * `externalMessageId` (a report accepted unsigned because it named such a message: it may
 * update that message and nothing else, and never claims an account).
 */
export type StatusEvent = {
  type: 'status';
  externalMessageId: string;
  status: MessageStatusEvent;
  error?: string;
  occurredAt?: Date;
} & ({ resolveBy: 'account'; externalAccountId: string } | { resolveBy: 'sent_message' });

export type { OutboundEvent, OutboundEventType } from './announcements.js';

/** The event types customers' endpoints may subscribe to (their shapes: ./announcements.ts). */
export const SUBSCRIBABLE_EVENT_TYPES = [...ENDPOINT_CHANGE_TYPES, 'webhook_inbox.dead_lettered'] as const;
