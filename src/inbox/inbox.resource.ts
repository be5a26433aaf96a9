import { Type } from 'typebox';
import { deliveryPayload } from './delivery-payload.js';
import type { InboxRow, InboxSummaryRow } from './inbox.queries.js';

/** A WebhookInbox row in a list: every field but `rawBody` and `payloadJson`. */
export function inboxSummary(row: InboxSummaryRow) {
  return {
    id: row.id,
    integrationKey: row.integration_key,
    appId: row.app_id,
    event: row.event,
    status: row.status,
    attemptCount: row.attempt_count,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
    lastError: row.last_error,
    processedAt: row.processed_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** WebhookInbox (SPEC §2) as the API shows one row: camelCase, ISO timestamps, the body too. */
export function inboxResource(row: InboxRow) {
  return { ...inboxSummary(row), rawBody: row.raw_body, payloadJson: deliveryPayload(row) ?? null };
}

export const INBOX_STATUSES = ['received', 'processed', 'failed', 'dead_letter'] as const;

/** Path id of a row: a string; anything but a uuid is simply not found (never a 422). */
export const InboxRowParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const RequeueHeaders = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) });
