/** The webhook-retry queue: every accepted delivery's id, and every scheduled retry. */
export const WEBHOOK_QUEUE = 'webhook-retry';
