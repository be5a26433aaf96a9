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
