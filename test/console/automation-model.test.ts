import { describe, expect, it } from 'vitest';
import type { RuleAction, RuleCondition } from '../../packages/client/src/index.js';
import { CONDITION_OPS } from '../../src/automation/conditions.js';
import {
  actionDraft,
  actionOf,
  blankCondition,
  blankRule,
  conditionDraft,
  conditionOf,
  FIELDS,
  opsOf,
  ruleBody,
  withField,
} from '../../src/console/settings/automation-model.js';

// The rule editor's forms hold strings; what they send is what the service compares.
describe('the rule editor’s model', () => {
  it('sends ids and numbers as numbers, yes/no as booleans, lists as lists', () => {
    const team = { ...blankCondition('teamId'), op: 'in' as const, values: ['3', '7'] };
    expect(conditionOf(team)).toEqual({ field: 'teamId', op: 'in', value: [3, 7] });
    expect(conditionOf({ ...blankCondition('insideBusinessHours'), value: 'false' })).toEqual({
      field: 'insideBusinessHours',
      op: 'eq',
      value: false,
    });
    const orders = { ...blankCondition('contact.attributes.orders'), op: 'gt' as const, value: ' 10 ' };
    expect(conditionOf(orders)).toEqual({ field: 'contact.attributes.orders', op: 'gt', value: 10 });
    // Not a number: sent as typed, for the service to refuse with its reason.
    expect(conditionOf({ ...orders, value: 'many' }).value).toBe('many');
    expect(conditionOf({ ...blankCondition('labels'), op: 'not_in', value: 'vip, , spam' }).value).toEqual(['vip', 'spam']);
    expect(conditionOf({ ...blankCondition('assigneeId'), op: 'is_not_set', value: '4' })).toEqual({
      field: 'assigneeId',
      op: 'is_not_set',
    });
  });

  it('offers only ops the service knows, and a new field starts over', () => {
    for (const f of FIELDS) for (const op of opsOf(f.field)) expect(CONDITION_OPS).toContain(op);
    expect(opsOf('contact.email')).not.toContain('gt');
    expect(opsOf('priority')).toContain('gt');
    const typed = { ...blankCondition('contact.email'), value: '@vip.test' };
    expect(withField(typed, 'status')).toEqual({ field: 'status', op: 'eq', value: '', values: [] });
    // Another attribute key keeps what was typed.
    const attr = { ...blankCondition('contact.attributes.tier'), value: 'gold' };
    expect(withField(attr, 'contact.attributes.level').value).toBe('gold');
  });

  it('reads back every condition and action it sends', () => {
    const conditions: RuleCondition[] = [
      { field: 'contact.email', op: 'contains', value: '@vip.test' },
      { field: 'status', op: 'in', value: ['open', 'pending'] },
      { field: 'connectionId', op: 'eq', value: 2 },
      { field: 'labels', op: 'is_set' },
      { field: 'labels', op: 'in', value: ['vip', 'billing'] },
      { field: 'insideBusinessHours', op: 'eq', value: false },
    ];
    for (const c of conditions) expect(conditionOf(conditionDraft(c))).toEqual(c);
    const actions: RuleAction[] = [
      { type: 'assign_user', userId: 5 },
      { type: 'assign_team', teamId: 3 },
      { type: 'route' },
      { type: 'add_labels', labels: ['vip', 'billing'] },
      { type: 'remove_labels', labels: ['spam'] },
      { type: 'set_status', status: 'snoozed', snoozeMinutes: 90 },
      { type: 'set_status', status: 'resolved' },
      { type: 'set_priority', priority: 'urgent' },
      { type: 'reply', text: 'Hi {{contact.name}}' },
      { type: 'reply', template: { name: 'order_update', language: 'en', parameters: { body: ['Maya', '#4471'] } } },
      { type: 'note', text: 'VIP: call back' },
    ];
    for (const a of actions) expect(actionOf(actionDraft(a))).toEqual(a);
  });

  it('sends idle minutes and statuses with a quiet-conversation rule only', () => {
    const idle = {
      ...blankRule(),
      name: 'Auto-resolve',
      event: 'thread.idle' as const,
      idleMinutes: '2880',
      statuses: ['pending' as const],
    };
    expect(ruleBody(idle)).toMatchObject({ event: 'thread.idle', idleMinutes: 2880, statuses: ['pending'] });
    // Switched to another event, what was typed for idleness is not sent.
    expect(ruleBody({ ...idle, event: 'message.created' })).toMatchObject({ idleMinutes: null, statuses: null });
  });
});
