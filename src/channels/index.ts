import type { IntegrationKey } from '../config.js';
import { aggregatorAdapter } from './aggregator.js';
import type { ChannelAdapter } from './channel.js';
import { emailAdapter } from './email.js';
import { imapAdapter } from './email-imap.js';
import { mailgunAdapter } from './email-mailgun.js';
import { postmarkAdapter } from './email-postmark.js';
import { livechatAdapter, type VisitorBus } from './livechat.js';
import { rejectingAdapter } from './rejecting.js';
import { smsAdapter } from './sms.js';
import { smsTwilioAdapter } from './sms-twilio.js';
import { socialAdapter } from './social.js';
import { telegramAdapter } from './telegram.js';
import { whatsappAdapter } from './whatsapp.js';
import { whatsappSessionAdapter } from './whatsapp-session.js';
import { whatsappSessionWahaAdapter } from './whatsapp-session-waha.js';

/**
 * Every integration key's adapter; the ingestion route knows nothing else about providers.
 * Live chat's here is its webhook side only; a sender's comes from `sendersWith` and the deps' bus.
 */
export const adapters: Record<IntegrationKey, ChannelAdapter> = {
  'social_one.native': socialAdapter('social_one.native'),
  'social_two.native': socialAdapter('social_two.native'),
  aggregator: aggregatorAdapter,
  whatsapp: whatsappAdapter,
  whatsapp_session: whatsappSessionAdapter,
  sms: smsAdapter,
  email: emailAdapter,
  livechat: rejectingAdapter('livechat'),
  ai: rejectingAdapter('ai'),
  'sms.twilio': smsTwilioAdapter,
  'whatsapp_session.waha': whatsappSessionWahaAdapter,
  telegram: telegramAdapter,
  'email.postmark': postmarkAdapter,
  'email.mailgun': mailgunAdapter,
  'email.imap': imapAdapter,
};

export function adapterFor(key: string): ChannelAdapter | undefined {
  return Object.hasOwn(adapters, key) ? adapters[key as IntegrationKey] : undefined;
}

/** What a sender needs besides the providers' HTTP APIs: live chat's visitor bus (the deps carry it). */
export interface SendBuses {
  visitors: VisitorBus;
}

/** The adapter a sender sends through, by key: the registry's, and live chat's built with its bus. */
export function sendersWith(buses: SendBuses): (key: string) => ChannelAdapter | undefined {
  const livechat = livechatAdapter(buses.visitors);
  return (key) => (key === 'livechat' ? livechat : adapterFor(key));
}
