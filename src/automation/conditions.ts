import type { RuleCondition, RuleScalar } from '../db/types.js';

/**
 * The condition interpreter of automation rules (docs/automation.md): conditions are data,
 * read here and nowhere else. No regular expression a user wrote, no code built from one: a
 * rule costs at most MAX_CONDITIONS comparisons of bounded values. Pure.
 */

export const CONDITION_FIELDS = [
  'text',
  'connectionId',
  'integrationKey',
  'status',
  'priority',
  'labels',
  'teamId',
  'assigneeId',
  'contact.name',
  'contact.email',
  'insideBusinessHours',
] as const;
/** `contact.attributes.<key>`: any key contact attributes take (1–100 characters). */
export const ATTRIBUTE_PREFIX = 'contact.attributes.';

/** The attribute a field names, or null when it names none. */
export function attributeKey(field: string): string | null {
  if (!field.startsWith(ATTRIBUTE_PREFIX)) return null;
  const key = field.slice(ATTRIBUTE_PREFIX.length);
  return key.length >= 1 && key.length <= 100 ? key : null;
}

export function isConditionField(field: string): boolean {
  return (CONDITION_FIELDS as readonly string[]).includes(field) || attributeKey(field) !== null;
}

export const CONDITION_OPS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'starts_with',
  'is_set',
  'is_not_set',
  'gt',
  'lt',
] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

/** What a thread is, as conditions read it: a value per field; absent = not set. */
export type Fact = RuleScalar | null | string[];
export interface Facts {
  text: string | null;
  connectionId: number;
  integrationKey: string;
  status: string;
  priority: string;
  labels: string[];
  teamId: number | null;
  assigneeId: number | null;
  contact: { name: string | null; email: string | null; attributes: Record<string, RuleScalar> };
  insideBusinessHours: boolean;
}

/** Priorities compare by rank, so "priority gt normal" means high or urgent. */
const PRIORITY_RANK: Record<string, number> = { low: 0, normal: 1, high: 2, urgent: 3 };

export function factOf(facts: Facts, field: string): Fact {
  const key = attributeKey(field);
  // Own keys only: an attribute named "constructor" is a value, not the prototype's function.
  if (key !== null) return Object.hasOwn(facts.contact.attributes, key) ? facts.contact.attributes[key]! : null;
  switch (field) {
    case 'contact.name':
      return facts.contact.name;
    case 'contact.email':
      return facts.contact.email;
    case 'text':
    case 'connectionId':
    case 'integrationKey':
    case 'status':
    case 'priority':
    case 'labels':
    case 'teamId':
    case 'assigneeId':
    case 'insideBusinessHours':
      return facts[field];
    default:
      return null;
  }
}

/** Text compares without regard to case; numbers and booleans as they are. */
const fold = (v: RuleScalar): RuleScalar => (typeof v === 'string' ? v.toLowerCase() : v);
const same = (a: RuleScalar, b: RuleScalar) => fold(a) === fold(b);
const isSet = (fact: Fact) => fact !== null && fact !== '' && !(Array.isArray(fact) && fact.length === 0);
const asList = (value: RuleCondition['value']): RuleScalar[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]);

function order(field: string, fact: RuleScalar, value: RuleScalar): number | null {
  if (field === 'priority' && typeof fact === 'string' && typeof value === 'string') {
    const a = PRIORITY_RANK[fact];
    const b = PRIORITY_RANK[value];
    return a === undefined || b === undefined ? null : a - b;
  }
  if (typeof fact === 'number' && typeof value === 'number') return fact - value;
  return null;
}

/** One condition against the facts. A list field (labels) holds when one of its items does. */
export function holds(facts: Facts, condition: RuleCondition): boolean {
  const fact = factOf(facts, condition.field);
  const { op, value } = condition;
  if (op === 'is_set') return isSet(fact);
  if (op === 'is_not_set') return !isSet(fact);
  if (op === 'neq' || op === 'not_in' || op === 'not_contains') {
    const positive = op === 'neq' ? 'eq' : op === 'not_in' ? 'in' : 'contains';
    return !holds(facts, { ...condition, op: positive });
  }
  const items: RuleScalar[] = Array.isArray(fact) ? fact : fact === null ? [] : [fact];
  return items.some((item) => itemHolds(condition.field, item, op as ConditionOp, value));
}

function itemHolds(field: string, item: RuleScalar, op: ConditionOp, value: RuleCondition['value']): boolean {
  switch (op) {
    case 'eq':
      return !Array.isArray(value) && value !== undefined && same(item, value);
    case 'in':
      return asList(value).some((v) => same(item, v));
    case 'contains':
      return typeof item === 'string' && typeof value === 'string' && item.toLowerCase().includes(value.toLowerCase());
    case 'starts_with':
      return typeof item === 'string' && typeof value === 'string' && item.toLowerCase().startsWith(value.toLowerCase());
    case 'gt':
    case 'lt': {
      if (Array.isArray(value) || value === undefined) return false;
      const d = order(field, item, value);
      return d !== null && (op === 'gt' ? d > 0 : d < 0);
    }
    default:
      return false;
  }
}

/** A rule's conditions: every one (`all`) or at least one (`any`); none at all always match. */
export function matches(facts: Facts, match: 'all' | 'any', conditions: readonly RuleCondition[]): boolean {
  if (conditions.length === 0) return true;
  return match === 'all' ? conditions.every((c) => holds(facts, c)) : conditions.some((c) => holds(facts, c));
}
