/**
 * The event contract between the channels and messaging: what a provider delivery means,
 * independent of the provider. Channel adapters produce these; messaging applies them.
 */

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
  | {
      type: 'status';
      /** '' for an unsigned SMS report: it may only update a message whose id is known. */
      externalAccountId: string;
      externalMessageId: string;
      status: MessageStatusEvent;
      error?: string;
      occurredAt?: Date;
    };

/**
 * The events customers receive on their webhook endpoints (DESIGN "Outbound webhooks"). The
 * body sent is `{ id, type, createdAt, workspaceId, data }`; `data` is the API's own resource
 * (Message, Thread, Contact, the inbox row without its body), so a receiver reads the same
 * shapes as the /v1 lists.
 */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'message.created',
  'message.updated',
  'thread.created',
  'contact.created',
  'contact.updated',
  'contact.merged',
  'webhook_inbox.dead_lettered',
] as const;

/** `ping` is sent only by an endpoint's `test` route, whatever its event filter. */
export type OutboundEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number] | 'ping';

export interface OutboundEvent {
  type: OutboundEventType;
  workspaceId: number;
  data: object;
}
