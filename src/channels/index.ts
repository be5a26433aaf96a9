import type { IntegrationKey } from '../config.js';
import type { WebhookAdapter } from './channel.js';
import { aggregatorAdapter } from './aggregator.js';
import { emailAdapter } from './email.js';
import { livechatAdapter } from './livechat.js';
import { rejectingAdapter } from './rejecting.js';
import { smsAdapter } from './sms.js';
import { socialAdapter } from './social.js';
import { whatsappSessionAdapter } from './whatsapp-session.js';
import { whatsappAdapter } from './whatsapp.js';

/** Every integration key's adapter; the ingestion route knows nothing else about providers. */
export const adapters: Record<IntegrationKey, WebhookAdapter> = {
  'social_one.native': socialAdapter('social_one.native'),
  'social_two.native': socialAdapter('social_two.native'),
  aggregator: aggregatorAdapter,
  whatsapp: whatsappAdapter,
  whatsapp_session: whatsappSessionAdapter,
  sms: smsAdapter,
  email: emailAdapter,
  livechat: livechatAdapter,
  ai: rejectingAdapter('ai'),
};

export function adapterFor(key: string): WebhookAdapter | undefined {
  return Object.hasOwn(adapters, key) ? adapters[key as IntegrationKey] : undefined;
}
