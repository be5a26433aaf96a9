import type { IntegrationKey } from '../config.js';
import { lookup } from './channel.js';

/** The most attachments a reply may carry on any channel (the route's schema says so too). */
export const MAX_REPLY_ATTACHMENTS = 10;

/**
 * How many files one reply can carry on each channel (docs/attachments.md, "Outbound"). The
 * providers' message APIs carry one file per message on WhatsApp, Messenger, Instagram, WAHA,
 * SMS/MMS (one `MediaUrl`) and Telegram (one `sendPhoto`/`sendDocument`…); e-mail and live chat
 * carry several. 0: the channel cannot send files (the aggregator's neutral send API has no
 * media field; the AI integration never sends).
 */
const FILES_PER_MESSAGE: Record<IntegrationKey, number> = {
  whatsapp: 1,
  'social_one.native': 1,
  'social_two.native': 1,
  whatsapp_session: 1,
  'whatsapp_session.waha': 1,
  sms: 1,
  'sms.twilio': 1,
  telegram: 1,
  email: MAX_REPLY_ATTACHMENTS,
  'email.postmark': MAX_REPLY_ATTACHMENTS,
  'email.mailgun': MAX_REPLY_ATTACHMENTS,
  'email.imap': MAX_REPLY_ATTACHMENTS,
  livechat: MAX_REPLY_ATTACHMENTS,
  aggregator: 0,
  ai: 0,
};

/** How many attachments a reply on `integrationKey` may carry; 0 when it cannot send files. */
export function filesPerMessage(integrationKey: string): number {
  return lookup(FILES_PER_MESSAGE, integrationKey) ?? 0;
}
