import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { AutomationRulesTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { THREAD_STATUSES } from '../threads/threads.resources.js';
import { CONDITION_OPS } from './conditions.js';
import { MAX_ACTIONS, RuleActionSchema, RuleActions } from './rule-actions.resources.js';

/** At most this many conditions in a rule, rules in a workspace (docs/automation.md). */
export const MAX_CONDITIONS = 20;
export const MAX_RULES = 100;

export const RULE_EVENTS = ['message.created', 'thread.created', 'thread.updated', 'thread.idle'] as const;

const Scalar = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]);
export const RuleConditionSchema = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      maxLength: 120,
      description:
        'text, connectionId, integrationKey, status, priority, labels, teamId, assigneeId, contact.name, contact.email, contact.attributes.<key>, insideBusinessHours',
    }),
    op: StringEnum(CONDITION_OPS),
    value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: 50 })])),
  },
  { additionalProperties: false, title: 'RuleCondition' },
);

export const AutomationRuleResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    enabled: Type.Boolean(),
    position: Type.Integer({ description: 'rules run in position order (then id)' }),
    event: StringEnum(RULE_EVENTS),
    match: StringEnum(['all', 'any'] as const),
    conditions: Type.Array(RuleConditionSchema),
    actions: RuleActions,
    idleMinutes: Nullable(Type.Integer({ description: 'thread.idle: minutes without a message' })),
    statuses: Nullable(Type.Array(StringEnum(THREAD_STATUSES), { description: 'thread.idle: the statuses an idle thread may have' })),
    runs: Type.Integer({ description: 'times its conditions matched and its actions ran' }),
    lastRunAt: Nullable(Timestamp),
    lastError: Nullable(Type.String({ description: 'what failed in the last run; null when every action applied' })),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'AutomationRule' },
);
export type AutomationRule = Static<typeof AutomationRuleResource>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  enabled: Type.Boolean(),
  position: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  event: StringEnum(RULE_EVENTS),
  match: StringEnum(['all', 'any'] as const),
  conditions: Type.Array(RuleConditionSchema, { maxItems: MAX_CONDITIONS }),
  actions: Type.Array(RuleActionSchema, { minItems: 1, maxItems: MAX_ACTIONS }),
  idleMinutes: Nullable(Type.Integer({ minimum: 5, maximum: 525_600 })),
  statuses: Nullable(Type.Array(StringEnum(THREAD_STATUSES), { minItems: 1, maxItems: 4 })),
};
export const AutomationRuleCreate = Type.Object(
  {
    name: fields.name,
    event: fields.event,
    actions: fields.actions,
    enabled: Type.Optional(fields.enabled),
    position: Type.Optional(fields.position),
    match: Type.Optional(fields.match),
    conditions: Type.Optional(fields.conditions),
    idleMinutes: Type.Optional(fields.idleMinutes),
    statuses: Type.Optional(fields.statuses),
  },
  { additionalProperties: false },
);
export const AutomationRulePatch = Type.Partial(Type.Object(fields), { additionalProperties: false, minProperties: 1 });

export function automationRuleResource(row: Selectable<AutomationRulesTable>): AutomationRule {
  return {
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    position: row.position,
    event: row.event,
    match: row.match,
    conditions: row.conditions as AutomationRule['conditions'],
    actions: row.actions as AutomationRule['actions'],
    idleMinutes: row.idle_minutes,
    statuses: row.statuses,
    runs: row.runs,
    lastRunAt: row.last_run_at?.toISOString() ?? null,
    lastError: row.last_error,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
