import { sql } from 'kysely';
import { EMAIL_INTEGRATION_KEYS } from '../channels/email-inbound.js';
import type { Executor } from '../db/database.js';
import type { RuleAction, RuleCondition, RuleEvent, ThreadStatus } from '../db/types.js';
import { wellFormedJson } from '../text/well-formed.js';

/** SQL of automation rules (docs/automation.md): a workspace has at most a hundred, read whole. */

export interface RuleWrite {
  name: string;
  enabled: boolean;
  position: number;
  event: RuleEvent;
  match: 'all' | 'any';
  conditions: RuleCondition[];
  actions: RuleAction[];
  idle_minutes: number | null;
  statuses: ThreadStatus[] | null;
}

const json = (row: RuleWrite) => ({ ...row, conditions: wellFormedJson(row.conditions), actions: wellFormedJson(row.actions) });

export async function listRules(db: Executor, workspaceId: number) {
  return db.selectFrom('automation_rules').selectAll().where('workspace_id', '=', workspaceId).orderBy('position').orderBy('id').execute();
}

export async function findRule(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('automation_rules').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function insertRule(db: Executor, workspaceId: number, row: RuleWrite & { idle_cutoff_at: Date | null }, at: Date) {
  return db
    .insertInto('automation_rules')
    .values({ ...json(row), workspace_id: workspaceId, created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateRule(
  db: Executor,
  workspaceId: number,
  id: number,
  row: RuleWrite & { idle_cutoff_at?: Date | null },
  at: Date,
) {
  return db
    .updateTable('automation_rules')
    .set({
      ...json(row),
      ...(row.idle_cutoff_at !== undefined ? { idle_cutoff_at: row.idle_cutoff_at, idle_cutoff_id: null } : {}),
      updated_at: at,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteRule(db: Executor, workspaceId: number, id: number): Promise<boolean> {
  const row = await db
    .deleteFrom('automation_rules')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The enabled rules of these workspaces for these events, in the order they run. */
export async function enabledRules(db: Executor, workspaceIds: number[], events: RuleEvent[]) {
  if (workspaceIds.length === 0 || events.length === 0) return [];
  return db
    .selectFrom('automation_rules')
    .select(['id', 'workspace_id', 'name', 'event', 'match', 'conditions', 'actions'])
    .where('workspace_id', 'in', workspaceIds)
    .where('event', 'in', events)
    .where('enabled', '=', true)
    .orderBy('position')
    .orderBy('id')
    .execute();
}

/** Counts runs: each rule's runs grow by `runs`, and its last run's time and error are set. */
export async function recordRuns(db: Executor, runs: { id: number; runs: number; error: string | null }[], at: Date) {
  if (runs.length === 0) return;
  await sql`
    UPDATE automation_rules r SET runs = r.runs + v.runs, last_run_at = ${at}, last_error = v.error
    FROM unnest(${runs.map((r) => r.id)}::int[], ${runs.map((r) => r.runs)}::int[], ${runs.map((r) => r.error)}::text[]) AS v(id, runs, error)
    WHERE r.id = v.id`.execute(db);
}

/** What conditions read of these threads: the thread, its channel and its contact. */
/**
 * The contact's e-mail as rules and variables read it: the one set on the contact, else the
 * address it mailed from (an e-mail handle). A contact who writes by e-mail has no `email` of
 * its own until someone sets one, yet `contact.email` is plainly that address.
 */
const contactEmail = sql<string | null>`COALESCE(contacts.email, (
  SELECT min(h.external_id) FROM contact_handles h
  WHERE h.workspace_id = contacts.workspace_id AND h.contact_id = contacts.id
    AND h.integration_key IN (${sql.join(EMAIL_INTEGRATION_KEYS)})))`;

export async function threadFacts(db: Executor, threadIds: number[]) {
  if (threadIds.length === 0) return [];
  return db
    .selectFrom('threads')
    .innerJoin('connections', 'connections.id', 'threads.connection_id')
    .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
    .select([
      'threads.id',
      'threads.workspace_id',
      'threads.connection_id',
      'connections.integration_key',
      'threads.status',
      'threads.priority',
      'threads.labels',
      'threads.team_id',
      'threads.assignee_id',
      'contacts.name as contact_name',
      contactEmail.as('contact_email'),
      'contacts.attributes as contact_attributes',
    ])
    .where('threads.id', 'in', threadIds)
    .execute();
}

/** What the variables of a rule's or macro's reply read: the thread's contact, the workspace, and an agent's name. */
export async function variableSources(db: Executor, threadId: number, agentId: number | null) {
  const row = await db
    .selectFrom('threads')
    .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
    .innerJoin('workspaces', 'workspaces.id', 'threads.workspace_id')
    .leftJoin('users', (join) => join.on(sql<boolean>`users.id = COALESCE(${agentId}::int, threads.assignee_id)`))
    .select([
      'contacts.name as contact_name',
      contactEmail.as('contact_email'),
      'contacts.attributes as contact_attributes',
      'workspaces.name as workspace_name',
      'users.name as agent_name',
    ])
    .where('threads.id', '=', threadId)
    .executeTakeFirst();
  return row;
}

/** The enabled thread.idle rules of every workspace (automation_rules_idle_idx). */
export async function idleRules(db: Executor) {
  return db
    .selectFrom('automation_rules')
    .select(['id', 'workspace_id'])
    .where('event', '=', 'thread.idle')
    .where('enabled', '=', true)
    .orderBy('id')
    .execute();
}

/** An idle rule for its check, locked; a check of it running elsewhere makes this one skip it. */
export async function lockIdleRule(db: Executor, id: number) {
  return db
    .selectFrom('automation_rules')
    .select(['id', 'workspace_id', 'idle_minutes', 'statuses', 'idle_cutoff_at', 'idle_cutoff_id'])
    .where('id', '=', id)
    .where('event', '=', 'thread.idle')
    .where('enabled', '=', true)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/**
 * Threads of a workspace whose last message fell after the rule's cutoff and at or before
 * `until`, oldest first: a range of threads_workspace_idx, never the workspace's every thread.
 */
export async function threadsGoneIdle(db: Executor, workspaceId: number, after: { at: Date; id: number }, until: Date, limit: number) {
  return goneIdleQuery(db, workspaceId, after, until, limit).execute();
}

/** The statement of threadsGoneIdle, for a test to read its plan. */
export function goneIdleQuery(db: Executor, workspaceId: number, after: { at: Date; id: number }, until: Date, limit: number) {
  return db
    .selectFrom('threads')
    .select(['id', 'status', 'last_message_at'])
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`(last_message_at, id) > (${after.at}, ${after.id})`)
    .where('last_message_at', '<=', until)
    .orderBy('last_message_at')
    .orderBy('id')
    .limit(limit);
}

/**
 * Of these threads (gone idle, with their last message time), those whose stretch the
 * service started on its own after a silence that was already `idleMinutes` long: the last
 * message is automation's (a rule's reply, an away message, a survey) and no contact or person
 * wrote in the `idleMinutes` before it. That silence already fired (docs/automation.md), so a
 * rule's own reply never fires it again; an away reply or a rule's answer to a contact's
 * message moments before does not hide the contact's message.
 */
export async function startedByAutomation(
  db: Executor,
  threads: { id: number; last_message_at: Date }[],
  idleMinutes: number,
): Promise<Set<number>> {
  if (threads.length === 0) return new Set();
  const { rows } = await sql<{ id: number }>`
    SELECT v.id FROM unnest(${threads.map((t) => t.id)}::bigint[], ${threads.map((t) => t.last_message_at)}::timestamptz[]) AS v(id, at)
    WHERE EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = v.id AND m.created_at = v.at AND m.automation)
      AND NOT EXISTS (
        SELECT 1 FROM messages m
        WHERE m.thread_id = v.id AND m.kind <> 'activity' AND NOT m.automation
          AND m.created_at > v.at - make_interval(mins => ${idleMinutes}) AND m.created_at <= v.at
      )`.execute(db);
  return new Set(rows.map((r) => Number(r.id)));
}

export async function moveIdleCutoff(db: Executor, id: number, at: Date, threadId: number) {
  await db.updateTable('automation_rules').set({ idle_cutoff_at: at, idle_cutoff_id: threadId }).where('id', '=', id).execute();
}
