import type { WebhookEventFilter } from '../../../packages/client/src/index.js';

/**
 * What the new-endpoint form offers: every event type an endpoint may subscribe to
 * (docs/outbound-webhooks.md, "Events"), after "every event". The service takes each one;
 * a type missing here could only be had through `*` or the API.
 */
export const WEBHOOK_EVENTS: WebhookEventFilter[] = [
  '*',
  'message.created',
  'message.updated',
  'thread.created',
  'thread.updated',
  'contact.created',
  'contact.updated',
  'contact.merged',
  'contact.erased',
  'sla.warning',
  'sla.breached',
  'csat.received',
  'webhook_inbox.dead_lettered',
];
