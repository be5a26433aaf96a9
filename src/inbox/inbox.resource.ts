import { deliveryPayload } from './delivery-payload.js';
import type { InboxRow } from './inbox.queries.js';

/** WebhookInbox (SPEC §2) as the API shows it: camelCase, ISO timestamps. */
export function inboxResource(row: InboxRow) {
  return {
    id: row.id,
    integrationKey: row.integration_key,
    appId: row.app_id,
    event: row.event,
    rawBody: row.raw_body,
    payloadJson: deliveryPayload(row) ?? null,
    status: row.status,
    attemptCount: row.attempt_count,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
    lastError: row.last_error,
    processedAt: row.processed_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export const INBOX_STATUSES = ['received', 'processed', 'failed', 'dead_letter'] as const;
