import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { SlaPoliciesTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { THREAD_PRIORITIES } from '../threads/threads.resources.js';
import type { PolicyWrite } from './sla-policies.queries.js';

const Target = Type.String({
  minLength: 2,
  maxLength: 40,
  description: 'an ISO 8601 duration, at least PT10S ("PT1H", "P1D"; a day is 24 hours, business time with businessHoursOnly)',
});
const Ids = Type.Array(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), { maxItems: 100 });

export const SlaConditions = Type.Object(
  {
    priorities: Type.Optional(Type.Array(StringEnum(THREAD_PRIORITIES), { maxItems: 4 })),
    connectionIds: Type.Optional(Type.With(Ids, { description: 'connections of the workspace' })),
    teamIds: Type.Optional(Type.With(Ids, { description: 'teams of the workspace' })),
    labels: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_:-]+$' }), {
        maxItems: 20,
        description: 'the thread carries at least one of them',
      }),
    ),
  },
  { additionalProperties: false, description: 'every condition given must match; none given matches every thread' },
);

export const SlaPolicyResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    position: Type.Integer({ description: 'the first enabled policy by position whose conditions match applies' }),
    enabled: Type.Boolean(),
    firstResponse: Nullable(Target),
    nextResponse: Nullable(Target),
    resolution: Nullable(Target),
    businessHoursOnly: Type.Boolean({ description: "the clocks run only inside the thread's business hours" }),
    conditions: SlaConditions,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'SlaPolicy' },
);
export type SlaPolicy = Static<typeof SlaPolicyResource>;

const Name = Type.String({ minLength: 1, maxLength: 100 });
const fields = {
  name: Name,
  position: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  enabled: Type.Boolean(),
  firstResponse: Nullable(Target),
  nextResponse: Nullable(Target),
  resolution: Nullable(Target),
  businessHoursOnly: Type.Boolean(),
  conditions: SlaConditions,
};
export const SlaPolicyCreate = Type.Object(
  {
    name: Name,
    position: Type.Optional(fields.position),
    enabled: Type.Optional(fields.enabled),
    firstResponse: Type.Optional(fields.firstResponse),
    nextResponse: Type.Optional(fields.nextResponse),
    resolution: Type.Optional(fields.resolution),
    businessHoursOnly: Type.Optional(fields.businessHoursOnly),
    conditions: Type.Optional(fields.conditions),
  },
  { additionalProperties: false },
);
export const SlaPolicyPatch = Type.Partial(Type.Object(fields), { additionalProperties: false, minProperties: 1 });

/** A policy's own fields by the API's names: the resource without its id and times (also what its audit entries name). */
export function slaPolicyFields(row: PolicyWrite) {
  return {
    name: row.name,
    position: row.position,
    enabled: row.enabled,
    firstResponse: row.first_response,
    nextResponse: row.next_response,
    resolution: row.resolution,
    businessHoursOnly: row.business_hours_only,
    conditions: row.conditions,
  };
}

export function slaPolicyResource(row: Selectable<SlaPoliciesTable>): SlaPolicy {
  return { id: row.id, ...slaPolicyFields(row), createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString() };
}
