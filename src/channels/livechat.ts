import type { ChannelAdapter, SendOutcome } from './channel.js';
import { rejectingAdapter } from './rejecting.js';

/**
 * Hands a live chat reply to whichever api process holds a socket of its visitor (a NOTIFY, so
 * the sending worker need not be that process). Kept narrow so the adapter stays free of SQL.
 */
export interface VisitorBus {
  offer(reply: { visitor: string; messageId: number }): Promise<void>;
}

/**
 * Live chat, built with the visitor bus its replies go through. Its webhook refuses everything
 * (docs/webhooks.md, "Integrations"): visitors write through `/v1/livechat/:widgetKey/*`, which applies their
 * messages itself. A reply is sent by handing it to the bus; its provider id is its own message
 * id (docs/replies.md). It is then `sent`; the api process whose socket takes it moves it to
 * `delivered`, and a visitor with no socket open finds it when the widget reconnects and reads
 * the thread.
 */
export function livechatAdapter(visitors: VisitorBus): ChannelAdapter {
  return {
    ...rejectingAdapter('livechat'),
    async send(target): Promise<SendOutcome> {
      await visitors.offer({ visitor: target.to, messageId: target.messageId });
      return { outcome: 'sent', externalId: String(target.messageId) };
    },
  };
}
