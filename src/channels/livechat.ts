import type { SendOutcome, WebhookAdapter } from './channel.js';
import { rejectingAdapter } from './rejecting.js';

/**
 * Live chat. Its webhook refuses everything (SPEC §5.2 rule 7): visitors write through
 * `/v1/livechat/:widgetKey/*`, which applies their messages itself. A reply is sent by handing
 * it to the visitor bus; its provider id is its own message id (DESIGN "Replies"). It is then
 * `sent`; the api process whose socket takes it moves it to `delivered`, and a visitor with no
 * socket open finds it when the widget reconnects and reads the thread.
 */
export const livechatAdapter: WebhookAdapter = {
  ...rejectingAdapter('livechat'),
  async send(target, _credentials, options): Promise<SendOutcome> {
    if (!options.visitors) return { outcome: 'failed', error: 'live chat replies need the visitor bus of the sender' };
    await options.visitors.offer({ visitor: target.to, messageId: target.messageId });
    return { outcome: 'sent', externalId: String(target.messageId) };
  },
};
