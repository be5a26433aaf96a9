import type { Static } from 'typebox';
import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import type { RuleCondition, ThreadStatus } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { THREAD_PRIORITIES, THREAD_STATUSES } from '../threads/threads.resources.js';
import { findRule, insertRule, listRules, type RuleWrite, updateRule } from './automation-rules.queries.js';
import { type AutomationRuleCreate, type AutomationRulePatch, automationRuleResource, MAX_RULES } from './automation-rules.resources.js';
import { isConditionField } from './conditions.js';
import { checkActions } from './rule-actions.js';

const MINUTE = 60_000;

/**
 * What each field but a contact attribute holds: a value of another kind never equals it (a
 * `connectionId` of `"12"`, an `insideBusinessHours` of `"false"`), so such a rule would match
 * nothing, silently; it is refused instead.
 */
const FIELD_KINDS: Partial<Record<string, 'string' | 'number' | 'boolean'>> = {
  text: 'string',
  integrationKey: 'string',
  status: 'string',
  priority: 'string',
  labels: 'string',
  'contact.name': 'string',
  'contact.email': 'string',
  connectionId: 'number',
  teamId: 'number',
  assigneeId: 'number',
  insideBusinessHours: 'boolean',
};
const KIND_WORDS = { string: 'text', number: 'an id (a number)', boolean: 'true or false' } as const;

/** A condition as stored, or a 422 naming it: a field rules read, a value of its kind its op takes. */
function checkCondition(c: RuleCondition, at: string): RuleCondition {
  if (!isConditionField(c.field)) throw errors.validation(`${at}.field: "${c.field.slice(0, 120)}" is not a field rules read`);
  const list = Array.isArray(c.value);
  if (c.op === 'is_set' || c.op === 'is_not_set') {
    if (c.value !== undefined) throw errors.validation(`${at}.value: ${c.op} takes no value`);
    return { field: c.field, op: c.op };
  }
  if (c.value === undefined) throw errors.validation(`${at}.value: ${c.op} needs a value`);
  if ((c.op === 'in' || c.op === 'not_in') !== list)
    throw errors.validation(
      `${at}.value: ${c.op === 'in' || c.op === 'not_in' ? `${c.op} takes a list` : `${c.op} takes one value, not a list`}`,
    );
  const values = list ? (c.value as unknown[]) : [c.value];
  if (list && values.length === 0) throw errors.validation(`${at}.value: the list is empty`);
  if ((c.op === 'contains' || c.op === 'not_contains' || c.op === 'starts_with') && typeof c.value !== 'string')
    throw errors.validation(`${at}.value: ${c.op} takes text`);
  if ((c.op === 'gt' || c.op === 'lt') && typeof c.value !== 'number' && c.field !== 'priority')
    throw errors.validation(`${at}.value: ${c.op} takes a number`);
  const kind = FIELD_KINDS[c.field];
  if (kind !== undefined) {
    const textOp = c.op === 'contains' || c.op === 'not_contains' || c.op === 'starts_with';
    const orderOp = c.op === 'gt' || c.op === 'lt';
    if ((textOp && kind !== 'string') || (orderOp && kind !== 'number' && c.field !== 'priority'))
      throw errors.validation(`${at}.op: ${c.op} never holds for ${c.field}, which is ${KIND_WORDS[kind]}`);
    const wrong = values.find((v) => typeof v !== kind);
    if (wrong !== undefined)
      throw errors.validation(`${at}.value: ${c.field} is ${KIND_WORDS[kind]}, not ${JSON.stringify(wrong).slice(0, 50)}`);
  }
  const allowed = c.field === 'status' ? THREAD_STATUSES : c.field === 'priority' ? THREAD_PRIORITIES : null;
  if (allowed && (c.op === 'eq' || c.op === 'neq' || c.op === 'in' || c.op === 'not_in' || c.op === 'gt' || c.op === 'lt')) {
    const bad = values.find((v) => !(allowed as readonly unknown[]).includes(v));
    if (bad !== undefined) throw errors.validation(`${at}.value: "${String(bad).slice(0, 50)}" is not one of ${allowed.join(', ')}`);
  }
  return c;
}

/**
 * The rule as stored, or a 422 naming the field that is wrong. The users, teams and templates
 * its actions name are checked when the actions are written (`checkNamed`): a rule whose team
 * was deleted since can still be renamed or disabled, and its run records the failing action.
 */
async function checked(
  deps: Pick<Deps, 'db'>,
  workspaceId: number,
  row: RuleWrite,
  written: { actions: boolean; conditions: boolean } = { actions: true, conditions: true },
): Promise<RuleWrite> {
  const name = row.name.trim();
  if (name.length === 0) throw errors.validation('name: must not be blank');
  // Conditions stored before a check existed (a value of the wrong kind) still let the rule be renamed or disabled.
  const conditions = written.conditions ? row.conditions.map((c, i) => checkCondition(c, `conditions[${i}]`)) : row.conditions;
  if (row.event === 'thread.idle') {
    if (row.idle_minutes === null) throw errors.validation('idleMinutes: a thread.idle rule needs it (at least 5)');
    if (row.statuses === null) throw errors.validation('statuses: a thread.idle rule needs the statuses an idle thread may have');
  } else if (row.idle_minutes !== null || row.statuses !== null)
    throw errors.validation('idleMinutes, statuses: only a thread.idle rule takes them');
  const actions = written.actions ? await checkActions(deps.db, workspaceId, row.actions) : row.actions;
  const statuses = row.statuses === null ? null : ([...new Set(row.statuses)] as ThreadStatus[]);
  return { ...row, name, conditions, actions, statuses };
}

/** Where a thread.idle rule's check starts: threads that go idle from now on (docs/automation.md). */
const cutoffFrom = (row: RuleWrite, now: Date) =>
  row.event === 'thread.idle' && row.idle_minutes !== null ? new Date(now.getTime() - row.idle_minutes * MINUTE) : null;

const audited = (row: RuleWrite) => ({
  name: row.name,
  enabled: row.enabled,
  position: row.position,
  event: row.event,
  match: row.match,
  conditions: row.conditions,
  actions: row.actions,
  idleMinutes: row.idle_minutes,
  statuses: row.statuses,
});

export async function createAutomationRule(deps: Deps, trail: Trail, workspaceId: number, body: Static<typeof AutomationRuleCreate>) {
  return deps.db.transaction().execute(async (trx) => {
    const existing = await listRules(trx, workspaceId);
    if (existing.length >= MAX_RULES) throw errors.validation(`a workspace holds at most ${MAX_RULES} automation rules`);
    const row = await checked({ db: trx }, workspaceId, {
      name: body.name,
      enabled: body.enabled ?? true,
      // Appended after the others unless placed.
      position: body.position ?? (existing.length === 0 ? 0 : Math.max(...existing.map((r) => r.position)) + 1),
      event: body.event,
      match: body.match ?? 'all',
      conditions: body.conditions ?? [],
      actions: body.actions,
      idle_minutes: body.idleMinutes ?? null,
      statuses: body.statuses ?? null,
    });
    const now = deps.now();
    const created = await insertRule(trx, workspaceId, { ...row, idle_cutoff_at: cutoffFrom(row, now) }, now);
    await recordAudit(trx, trail, 'automation_rule.created', { type: 'automation_rule', id: created.id }, changesOf(null, audited(row)));
    return automationRuleResource(created);
  });
}

/**
 * Changes a rule. A thread.idle rule whose idle time changes, or that is enabled again, looks
 * at threads going idle from then on: a rule switched on does not fire for every thread that
 * went quiet while it was off.
 */
export async function changeAutomationRule(
  deps: Deps,
  trail: Trail,
  workspaceId: number,
  id: number,
  patch: Static<typeof AutomationRulePatch>,
) {
  return deps.db.transaction().execute(async (trx) => {
    const current = await findRule(trx, workspaceId, id);
    if (!current) throw errors.notFound('automation rule');
    const before: RuleWrite = {
      name: current.name,
      enabled: current.enabled,
      position: current.position,
      event: current.event,
      match: current.match,
      conditions: current.conditions,
      actions: current.actions,
      idle_minutes: current.idle_minutes,
      statuses: current.statuses,
    };
    const event = patch.event ?? current.event;
    const row = await checked(
      { db: trx },
      workspaceId,
      {
        name: patch.name ?? current.name,
        enabled: patch.enabled ?? current.enabled,
        position: patch.position ?? current.position,
        event,
        match: patch.match ?? current.match,
        conditions: patch.conditions ?? current.conditions,
        actions: patch.actions ?? current.actions,
        // Moving a rule off thread.idle drops what only that event takes.
        idle_minutes: patch.idleMinutes !== undefined ? patch.idleMinutes : event === 'thread.idle' ? current.idle_minutes : null,
        statuses: patch.statuses !== undefined ? patch.statuses : event === 'thread.idle' ? current.statuses : null,
      },
      { actions: patch.actions !== undefined, conditions: patch.conditions !== undefined },
    );
    const now = deps.now();
    const restart =
      row.event === 'thread.idle' &&
      (current.event !== 'thread.idle' || row.idle_minutes !== current.idle_minutes || (row.enabled && !current.enabled));
    const updated = await updateRule(trx, workspaceId, id, restart ? { ...row, idle_cutoff_at: cutoffFrom(row, now) } : row, now);
    if (!updated) throw errors.notFound('automation rule');
    await recordAudit(trx, trail, 'automation_rule.updated', { type: 'automation_rule', id }, changesOf(audited(before), audited(row)));
    return automationRuleResource(updated);
  });
}
