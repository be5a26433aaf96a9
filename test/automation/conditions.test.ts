import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONDITION_OPS, type Facts, matches } from '../../src/automation/conditions.js';
import type { RuleCondition, RuleScalar } from '../../src/db/types.js';

// The interpreter against a reference written the plain way, one branch per field and op as
// docs/automation.md words them, on random threads and random rules (a fixed seed, so a
// failure is found again by running this file).

const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const words = fc.constantFrom('vip', 'VIP', 'refund', 'Ada', 'ada@example.com', 'billing', '', 'x');
const scalar: fc.Arbitrary<RuleScalar> = fc.oneof(words, fc.integer({ min: 0, max: 5 }), fc.boolean(), fc.constantFrom(...PRIORITIES));

const factsArb: fc.Arbitrary<Facts> = fc.record({
  text: fc.option(fc.constantFrom('I want a refund', 'hello VIP', 'Billing question', ''), { nil: null }),
  connectionId: fc.integer({ min: 1, max: 3 }),
  integrationKey: fc.constantFrom('sms', 'whatsapp', 'email.postmark'),
  status: fc.constantFrom('open', 'pending', 'resolved', 'snoozed'),
  priority: fc.constantFrom(...PRIORITIES),
  labels: fc.uniqueArray(fc.constantFrom('vip', 'billing', 'refund', 'x'), { maxLength: 3 }),
  teamId: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  assigneeId: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  contact: fc.record({
    name: fc.option(fc.constantFrom('Ada', 'Bo', 'ada'), { nil: null }),
    email: fc.option(fc.constantFrom('ada@example.com', 'bo@example.org'), { nil: null }),
    attributes: fc.dictionary(fc.constantFrom('tier', 'plan', 'constructor'), scalar, { maxKeys: 3 }),
  }),
  insideBusinessHours: fc.boolean(),
});

const FIELDS = [
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
  'contact.attributes.tier',
  'contact.attributes.constructor',
  'insideBusinessHours',
];
const conditionArb: fc.Arbitrary<RuleCondition> = fc
  .record({
    field: fc.constantFrom(...FIELDS),
    op: fc.constantFrom(...CONDITION_OPS),
    value: scalar,
    list: fc.array(scalar, { minLength: 1, maxLength: 3 }),
  })
  .map(({ field, op, value, list }) =>
    op === 'is_set' || op === 'is_not_set'
      ? { field, op }
      : op === 'in' || op === 'not_in'
        ? { field, op, value: list }
        : { field, op, value },
  );

function lookup(facts: Facts, field: string): unknown {
  if (field === 'contact.name') return facts.contact.name;
  if (field === 'contact.email') return facts.contact.email;
  if (field.startsWith('contact.attributes.')) {
    const key = field.slice('contact.attributes.'.length);
    return Object.keys(facts.contact.attributes).includes(key) ? facts.contact.attributes[key] : null;
  }
  return (facts as unknown as Record<string, unknown>)[field];
}

const low = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);

function reference(facts: Facts, c: RuleCondition): boolean {
  const fact = lookup(facts, c.field);
  const values: unknown[] = Array.isArray(fact) ? fact : fact === null || fact === undefined ? [] : [fact];
  const empty = fact === null || fact === undefined || fact === '' || (Array.isArray(fact) && fact.length === 0);
  const v = c.value;
  const one = (item: unknown): boolean => {
    if (c.op === 'eq' || c.op === 'neq') return low(item) === low(v);
    if (c.op === 'in' || c.op === 'not_in') return (v as unknown[]).some((x) => low(x) === low(item));
    if (c.op === 'contains' || c.op === 'not_contains')
      return typeof item === 'string' && typeof v === 'string' && item.toLowerCase().indexOf(v.toLowerCase()) !== -1;
    if (c.op === 'starts_with')
      return typeof item === 'string' && typeof v === 'string' && item.toLowerCase().indexOf(v.toLowerCase()) === 0;
    if (c.op === 'gt' || c.op === 'lt') {
      let a: number | undefined;
      let b: number | undefined;
      if (c.field === 'priority') {
        a = PRIORITIES.indexOf(item as string);
        b = PRIORITIES.indexOf(v as string);
        if (a < 0 || b < 0) return false;
      } else if (typeof item === 'number' && typeof v === 'number') {
        a = item;
        b = v;
      } else return false;
      return c.op === 'gt' ? a > b : a < b;
    }
    return false;
  };
  switch (c.op) {
    case 'is_set':
      return !empty;
    case 'is_not_set':
      return empty;
    case 'neq':
    case 'not_in':
    case 'not_contains':
      return !values.some(one);
    default:
      return values.some(one);
  }
}

describe('automation rule conditions', () => {
  it('match exactly as the reference evaluator, for random rules and threads', () => {
    fc.assert(
      fc.property(
        factsArb,
        fc.constantFrom('all' as const, 'any' as const),
        fc.array(conditionArb, { maxLength: 20 }),
        (facts, match, conditions) => {
          const expected =
            conditions.length === 0
              ? true
              : match === 'all'
                ? conditions.every((c) => reference(facts, c))
                : conditions.some((c) => reference(facts, c));
          expect(matches(facts, match, conditions)).toBe(expected);
        },
      ),
      { seed: 38, numRuns: 2000 },
    );
  });

  it('reads an attribute named like a property of every object as the contact set it', () => {
    const facts = {
      text: null,
      connectionId: 1,
      integrationKey: 'sms',
      status: 'open',
      priority: 'normal',
      labels: [],
      teamId: null,
      assigneeId: null,
      contact: { name: null, email: null, attributes: {} },
      insideBusinessHours: true,
    } satisfies Facts;
    expect(matches(facts, 'all', [{ field: 'contact.attributes.constructor', op: 'is_set' }])).toBe(false);
    expect(matches(facts, 'all', [{ field: 'contact.attributes.toString', op: 'is_not_set' }])).toBe(true);
  });
});
