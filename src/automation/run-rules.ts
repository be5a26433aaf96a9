import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { BusinessHoursValue, RuleAction, RuleCondition, RuleEvent } from '../db/types.js';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import type { Change } from '../messaging/announcements.js';
import type { BusinessHours } from '../sla/business-hours.js';
import { insideBusinessHours } from '../sla/business-time.js';
import { hoursOf, loadHours } from '../sla/sla.service.js';
import type { AutomationActor } from '../threads/thread-workflow.service.js';
import { applyAction } from './apply-action.js';
import { enabledRules, recordRuns, threadFacts } from './automation-rules.queries.js';
import { type Facts, matches } from './conditions.js';

/**
 * Running automation rules (docs/automation.md), in the transaction of the change that fired
 * them. A firing is one event on one thread; the workspace's enabled rules of that event run
 * in position order, each against the thread as the rules before it left it. What a rule does
 * goes through the API's own code as an AutomationActor, and fires no rule: only the callers
 * here (the inbound batch, a change through the API, the idle check) fire rules, never a rule.
 */

export interface Firing {
  event: RuleEvent;
  workspaceId: number;
  threadId: number;
  /** The contact's message that fired it (`message.created`, `thread.created`): what `text` reads. */
  text: string | null;
  /**
   * That message is automatic mail (an auto-reply, a list's mail, a bounce: docs/email.md): a
   * rule's `reply` is not sent to it, or two auto-responders would answer each other for ever.
   */
  automatic?: boolean;
}

type Rule = Awaited<ReturnType<typeof enabledRules>>[number];
type FactRow = Awaited<ReturnType<typeof threadFacts>>[number];
type Hours = Awaited<ReturnType<typeof loadHours>>;

const readsHours = (rule: Rule) => (rule.conditions as RuleCondition[]).some((c) => c.field === 'insideBusinessHours');

function factsOf(row: FactRow, text: string | null, inside: boolean): Facts {
  return {
    text,
    connectionId: row.connection_id,
    integrationKey: row.integration_key,
    status: row.status,
    priority: row.priority,
    labels: row.labels,
    teamId: row.team_id,
    assigneeId: row.assignee_id,
    contact: { name: row.contact_name, email: row.contact_email, attributes: row.contact_attributes },
    insideBusinessHours: inside,
  };
}

/** Why an action failed, as `lastError` keeps it: the API's own words, or "internal error" (logged). */
function reasonOf(deps: Deps, err: unknown, rule: Rule, index: number, action: RuleAction): string {
  const where = `actions[${index}] ${action.type}`;
  if (err instanceof AppError) return `${where}: ${err.message}`;
  deps.log.error({ err, ruleId: rule.id }, 'automation rule action failed');
  return `${where}: internal error`;
}

/**
 * Each action in its own savepoint: one that fails leaves nothing behind and the transaction
 * usable, so the others still apply. Answers what failed, or null.
 */
async function perform(deps: Deps, trx: Executor, rule: Rule, firing: Firing, now: Date): Promise<string | null> {
  const actor: AutomationActor = { kind: 'automation', workspaceId: rule.workspace_id, name: `Automation “${rule.name}”` };
  const failures: string[] = [];
  const { threadId } = firing;
  for (const [i, action] of (rule.actions as RuleAction[]).entries()) {
    if (action.type === 'reply' && firing.automatic) continue;
    await sql`SAVEPOINT automation_action`.execute(trx);
    try {
      await applyAction(deps, trx, actor, threadId, action, now);
      await sql`RELEASE SAVEPOINT automation_action`.execute(trx);
    } catch (err) {
      await sql`ROLLBACK TO SAVEPOINT automation_action`.execute(trx);
      failures.push(reasonOf(deps, err, rule, i, action));
    }
  }
  return failures.length === 0 ? null : failures.join('; ').slice(0, 1000);
}

/** Whether `now` is inside the thread's hours (its team's own, else the workspace's), read once per workspace and team. */
async function insideHours(trx: Executor, cache: Map<number, Hours & { teamsRead: Set<number> }>, row: FactRow, now: Date) {
  let h = cache.get(row.workspace_id);
  if (!h) {
    h = { ...(await loadHours(trx, row.workspace_id, [row.team_id])), teamsRead: new Set(row.team_id === null ? [] : [row.team_id]) };
    cache.set(row.workspace_id, h);
  }
  if (row.team_id !== null && !h.teamsRead.has(row.team_id)) {
    for (const [id, v] of (await loadHours(trx, row.workspace_id, [row.team_id])).teams) h.teams.set(id, v);
    h.teamsRead.add(row.team_id);
  }
  return insideBusinessHours(hoursOf(row, h.workspace, h.teams as Map<number, BusinessHoursValue>) as BusinessHours | null, now);
}

/**
 * Runs the rules of these firings. Costs one indexed read when no workspace concerned has a
 * rule of these events, and one more (the threads' facts) when one has: conditions are
 * evaluated in memory, and only a rule that matches writes anything.
 */
export async function runRules(
  deps: Deps,
  trx: Executor,
  firings: readonly Firing[],
  now: Date,
  options: { ruleId?: number } = {},
): Promise<void> {
  if (firings.length === 0) return;
  const enabled = await enabledRules(trx, [...new Set(firings.map((f) => f.workspaceId))], [...new Set(firings.map((f) => f.event))]);
  // The idle check runs one rule at a time: each has its own idle time.
  const rules = options.ruleId === undefined ? enabled : enabled.filter((r) => r.id === options.ruleId);
  if (rules.length === 0) return;
  const byEvent = new Map<string, Rule[]>();
  for (const rule of rules) {
    const key = `${rule.workspace_id} ${rule.event}`;
    byEvent.set(key, [...(byEvent.get(key) ?? []), rule]);
  }
  const due = firings.filter((f) => byEvent.has(`${f.workspaceId} ${f.event}`));
  if (due.length === 0) return;
  const facts = new Map((await threadFacts(trx, [...new Set(due.map((f) => f.threadId))])).map((r) => [r.id, r]));
  const hours = new Map<number, Hours & { teamsRead: Set<number> }>();
  const runs = new Map<number, { id: number; runs: number; error: string | null }>();
  for (const firing of due) {
    let row = facts.get(firing.threadId);
    for (const rule of byEvent.get(`${firing.workspaceId} ${firing.event}`)!) {
      if (!row) break;
      const inside = readsHours(rule) ? await insideHours(trx, hours, row, now) : true;
      if (!matches(factsOf(row, firing.text, inside), rule.match, rule.conditions as RuleCondition[])) continue;
      const error = await perform(deps, trx, rule, firing, now);
      const run = runs.get(rule.id) ?? { id: rule.id, runs: 0, error: null };
      run.runs += 1;
      run.error = error;
      runs.set(rule.id, run);
      // The next rule sees the thread as this one left it.
      row = (await threadFacts(trx, [firing.threadId]))[0];
      if (row) facts.set(row.id, row);
    }
  }
  await recordRuns(trx, [...runs.values()], now);
}

/**
 * The firings of what an inbound batch announced: `thread.created` for each new thread (its
 * first contact message is the `text`), then `message.created` for each message a contact
 * wrote. Pure.
 */
export function inboundFirings(changes: readonly Change[]): Firing[] {
  const fromContact = changes.flatMap((c) =>
    c.type === 'message.created' && c.message.direction === 'inbound' && c.message.kind === 'message' ? [c.message] : [],
  );
  const firings: Firing[] = [];
  for (const c of changes) {
    if (c.type !== 'thread.created') continue;
    const first = fromContact.find((m) => m.thread_id === c.thread.id);
    firings.push({
      event: 'thread.created',
      workspaceId: c.thread.workspace_id,
      threadId: c.thread.id,
      text: first?.text ?? null,
      automatic: first?.email?.automatic === true,
    });
  }
  for (const m of fromContact)
    firings.push({
      event: 'message.created',
      workspaceId: m.workspace_id,
      threadId: m.thread_id,
      text: m.text,
      automatic: m.email?.automatic === true,
    });
  return firings;
}

/** Runs the rules an inbound batch fires, after the batch's own changes were announced. */
export async function runInboundRules(deps: Deps, trx: Executor, changes: readonly Change[], now: Date): Promise<void> {
  await runRules(deps, trx, inboundFirings(changes), now);
}
