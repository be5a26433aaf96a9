import { type Static, Type } from 'typebox';
import { VERIFICATION_KINDS } from '../channels/channel.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { deliveryPayload } from './delivery-payload.js';
import type { InboxRow, InboxSummaryRow } from './inbox.queries.js';

export const INBOX_STATUSES = ['received', 'processed', 'failed', 'dead_letter'] as const;

/**
 * A list's `status` filter: one of the statuses, or empty, which is no filter (the list's
 * default), as an empty `integrationKey=` or `appId=` is.
 */
export const inboxStatusFilter = (description: string) => StringEnum(['', ...INBOX_STATUSES], { description });

/** A WebhookInbox row (docs/api.md) in a list: every field but `rawBody` and `payloadJson`. */
export const InboxSummary = Type.Object(
  {
    id: Type.String(),
    integrationKey: Type.String(),
    appId: Nullable(Type.String({ description: 'null until the delivery resolves to one app, and when it spans several' })),
    event: Nullable(Type.String()),
    status: StringEnum(INBOX_STATUSES),
    verification: StringEnum(VERIFICATION_KINDS, {
      description:
        'how the delivery was accepted: signed, by the report secret, correlated with a sent message, or with verification skipped',
    }),
    attemptCount: Type.Integer(),
    nextRetryAt: Nullable(Timestamp),
    lastError: Nullable(Type.String()),
    processedAt: Nullable(Timestamp),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookInboxSummary' },
);

/** One WebhookInbox row with its body: the raw body verbatim and the parsed payload. */
export const InboxResource = Type.Object(
  {
    ...InboxSummary.properties,
    rawBody: Type.String(),
    payloadJson: Type.Unknown({ description: 'the parsed body; null when it does not parse' }),
  },
  { title: 'WebhookInbox' },
);

/** A requeue's answer: the row's status before the enqueue (docs/webhooks.md, "States, retries and dead letters"). */
export const RequeueResult = Type.Object({ id: Type.String(), status: StringEnum(INBOX_STATUSES) }, { title: 'RequeueResult' });

export function inboxSummary(row: InboxSummaryRow): Static<typeof InboxSummary> {
  return {
    id: row.id,
    integrationKey: row.integration_key,
    appId: row.app_id,
    event: row.event,
    status: row.status,
    verification: row.verification,
    attemptCount: row.attempt_count,
    nextRetryAt: row.next_retry_at?.toISOString() ?? null,
    lastError: row.last_error,
    processedAt: row.processed_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** WebhookInbox (docs/api.md) as the API shows one row: camelCase, ISO timestamps, the body too. */
export function inboxResource(row: InboxRow): Static<typeof InboxResource> {
  return { ...inboxSummary(row), rawBody: row.raw_body, payloadJson: deliveryPayload(row) ?? null };
}

/** Path id of a row: a string; anything but a uuid is simply not found (never a 422). */
export const InboxRowParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'the WebhookInbox row id' }) });
export const RequeueHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "a key of the caller's choice; clients send one so a retried requeue is recognisable",
    }),
  ),
});
