import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { WebhookAttemptsTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../messaging/events.js';
import type { DeliveryRow } from './deliveries.queries.js';
import type { EndpointRow } from './endpoints.queries.js';
import { publicEventId } from './outbox.js';

/** API shapes of outbound webhooks (docs/outbound-webhooks.md) and their mappers. */

export const EVENT_FILTER_VALUES = [...SUBSCRIBABLE_EVENT_TYPES, '*'] as const;
export const SIGNATURE_SCHEMES = ['service', 'standard'] as const;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

const EventFilter = Type.Array(StringEnum(EVENT_FILTER_VALUES), {
  minItems: 1,
  maxItems: EVENT_FILTER_VALUES.length,
  uniqueItems: true,
  description: 'event types to receive; ["*"] for all',
});

export const EndpointResource = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    description: Type.String(),
    events: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    signatureScheme: StringEnum(SIGNATURE_SCHEMES),
    disabledReason: Nullable(Type.String({ description: 'why the service disabled the endpoint; null when enabled or disabled by hand' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'WebhookEndpoint' },
);

/** The create and rotate answers: the endpoint and its signing secret, shown only there. */
export const EndpointWithSecret = Type.Object(
  { ...EndpointResource.properties, secret: Type.String({ description: 'the signing secret; shown only in this answer' }) },
  { title: 'WebhookEndpointWithSecret' },
);

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL the events are POSTed to' });
const Description = Type.String({ maxLength: 500 });

export const EndpointCreate = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    events: Type.Optional(EventFilter),
    enabled: Type.Optional(Type.Boolean()),
    signatureScheme: Type.Optional(StringEnum(SIGNATURE_SCHEMES)),
    secret: Type.Optional(
      Type.String({ maxLength: 100, description: 'bring your own secret: whsec_ and base64 of 24 to 64 bytes; generated when absent' }),
    ),
  },
  {},
);

export const EndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    events: Type.Optional(EventFilter),
    enabled: Type.Optional(Type.Boolean({ description: 'true re-enables an endpoint the service disabled' })),
    signatureScheme: Type.Optional(StringEnum(SIGNATURE_SCHEMES)),
  },
  {},
);

export const AttemptResource = Type.Object(
  {
    attemptedAt: Timestamp,
    statusCode: Nullable(Type.Integer({ description: 'the receiver’s HTTP status; null when there was no answer' })),
    durationMs: Type.Integer(),
    error: Nullable(Type.String()),
  },
  { title: 'WebhookAttempt' },
);

export const DeliveryResource = Type.Object(
  {
    id: Type.Integer({ description: 'the delivery id: x-service-delivery / webhook-id, the same on every attempt' }),
    endpointId: Type.Integer(),
    eventId: Type.String(),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Array(AttemptResource),
    nextAttemptAt: Nullable(Timestamp),
    createdAt: Timestamp,
  },
  { title: 'WebhookDelivery' },
);

export function endpointResource(row: EndpointRow): Static<typeof EndpointResource> {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    signatureScheme: row.signature_scheme,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function deliveryResource(row: DeliveryRow, attempts: Selectable<WebhookAttemptsTable>[]): Static<typeof DeliveryResource> {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: publicEventId(row.event_id),
    eventType: row.event_type,
    status: row.status,
    attempts: attempts
      .filter((a) => a.delivery_id === row.id)
      .map((a) => ({ attemptedAt: a.attempted_at.toISOString(), statusCode: a.status_code, durationMs: a.duration_ms, error: a.error })),
    nextAttemptAt: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    createdAt: row.created_at.toISOString(),
  };
}
