import type { Selectable } from 'kysely';
import type { TenantAuth } from '../auth/auth.js';
import { sendSurvey } from '../csat/survey.js';
import type { Executor } from '../db/database.js';
import type { ThreadPriority, ThreadStatus, ThreadsTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { insertNotifications } from '../notifications/notifications.queries.js';
import { recordOpenings, recordResolution } from '../reports/record.js';
import { moveSla, type SlaEvent } from '../sla/sla.service.js';
import { findTeam, keepTeam } from '../teams/teams.queries.js';
import { requireTeamOf } from '../teams/teams.service.js';
import { assigneeLine, labelsLine, priorityLine, statusLine, teamLine } from './activity.js';
import { routeWaiting } from './routing.js';
import { enqueueSnoozeWake } from './snooze.enqueue.js';
import { LABEL_PATTERN } from './thread-filters.js';
import {
  apiKeyName,
  findAssignableUser,
  insertTranscriptLines,
  lockAssignment,
  lockThread,
  recordAssigned,
  type ThreadChange,
  type TranscriptLine,
  updateThread,
  userNames,
} from './thread-workflow.queries.js';
import { findThreadViews } from './threads.queries.js';
import { threadResource } from './threads.resources.js';

/** Labels: at most this many on a thread, each 1–50 of `a-z 0-9 - _ :` once lower-cased. */
export const MAX_LABELS = 20;

export interface ThreadPatch {
  status?: ThreadStatus;
  assigneeId?: number | null;
  snoozedUntil?: string | null;
  labels?: string[];
  teamId?: number | null;
  priority?: ThreadPriority;
}

/**
 * An automation rule acting on a thread (docs/automation.md): it sees every thread of its
 * workspace, writes no author, and activity lines name it ("Automation “VIP” added the label
 * vip"). Changes it makes fire no rules.
 */
export interface AutomationActor {
  kind: 'automation';
  workspaceId: number;
  /** How activity lines name it: `Automation “<rule name>”`. */
  name: string;
}

/** Who changes a thread: a tenant caller, or a rule. */
export type ThreadActor = TenantAuth | AutomationActor;

/** Who made a change, as activity lines name them: a user, "API key <name>" or a rule (no author). */
async function actorOf(db: Executor, auth: ThreadActor): Promise<{ authorId: number | null; name: string }> {
  if (auth.kind === 'automation') return { authorId: null, name: auth.name };
  if (auth.kind === 'api_key') return { authorId: null, name: `API key ${(await apiKeyName(db, auth.apiKeyId)) ?? auth.apiKeyId}` };
  const name = (await userNames(db, [auth.userId])).get(auth.userId) ?? `user ${auth.userId}`;
  return { authorId: auth.userId, name };
}

/** The labels lower-cased and without repeats, in the order given; 422 naming the first bad one. */
export function normaliseLabels(labels: string[]): string[] {
  const out = [...new Set(labels.map((l) => l.toLowerCase()))];
  const bad = out.find((l) => !LABEL_PATTERN.test(l));
  if (bad !== undefined) throw errors.validation(`labels: "${bad}" must be 1 to 50 of a-z, 0-9, "-", "_" and ":"`);
  if (out.length > MAX_LABELS) throw errors.validation(`labels: at most ${MAX_LABELS}`);
  return out;
}

/** The first instant toISOString writes with more than four digits of year. */
const LAST_INSTANT = Date.parse('+010000-01-01T00:00:00Z');

/** Where a snooze is asked for, the time it ends: in the future, and only with status snoozed. */
function snoozeOf(thread: Selectable<ThreadsTable>, patch: ThreadPatch, now: Date): { status: ThreadStatus; until: Date | null } {
  const status = patch.status ?? thread.status;
  if (status !== 'snoozed') {
    if (patch.snoozedUntil !== undefined && patch.snoozedUntil !== null) {
      throw errors.validation('snoozedUntil applies to a snoozed thread: send it with status "snoozed"');
    }
    return { status, until: null };
  }
  if (patch.snoozedUntil === undefined || patch.snoozedUntil === null) {
    if (patch.status === 'snoozed' || patch.snoozedUntil === null)
      throw errors.validation('status "snoozed" needs a snoozedUntil in the future');
    return { status, until: thread.snoozed_until };
  }
  const until = new Date(patch.snoozedUntil);
  if (!(until.getTime() > now.getTime())) throw errors.validation('snoozedUntil must be in the future');
  // An offset may carry a date-time of the year 9999 past the end of that year; neither an ISO
  // answer in four digits nor the job that ends the snooze can hold it.
  if (until.getTime() >= LAST_INSTANT) throw errors.validation('snoozedUntil must be before 10000-01-01T00:00:00Z');
  return { status, until };
}

/**
 * What a change does to the SLA clock (docs/sla.md): resolving stops it, leaving `resolved`
 * is a new opening, a new priority, team or labels may bring another policy.
 */
function slaEventOf(before: ThreadStatus, after: ThreadStatus, matchedFieldsChanged: boolean): SlaEvent | null {
  if (after === 'resolved' && before !== 'resolved') return 'resolved';
  if (before === 'resolved' && after !== 'resolved') return 'opened';
  return matchedFieldsChanged ? 'matched' : null;
}

/** The thread as the API shows it, read in the caller's transaction. */
async function viewOf(db: Executor, id: number) {
  const [view] = await findThreadViews(db, [id]);
  if (!view) throw errors.notFound('thread');
  return view;
}

/**
 * A change of a thread (`PATCH /v1/threads/:id`, whose route runs it with the rules it fires:
 * ../automation/change-thread.ts), in the caller's transaction: status (with a snooze's end),
 * assignee, team, priority, labels. Everything is checked before anything is written; a change
 * writes an activity line for each thing that changed and announces `thread.updated` in the
 * same transaction, and a snooze queues the job that ends it. A patch that changes nothing
 * answers the thread and announces nothing. Also for a change another one causes (a reply
 * that assigns, a rule's action).
 */
export async function changeThreadIn(deps: Deps, trx: Executor, auth: ThreadActor, threadId: number, patch: ThreadPatch) {
  return (await changeThreadTold(deps, trx, auth, threadId, patch)).thread;
}

/** changeThreadIn that also says whether anything changed (what fires `thread.updated` rules). */
export async function changeThreadTold(deps: Deps, trx: Executor, auth: ThreadActor, threadId: number, patch: ThreadPatch) {
  // A team named is kept before the thread is locked, in the order a team's deletion takes
  // them (the team, then its threads): the deletion waits for this change, or this change
  // finds the team gone (422, after the thread's own 404).
  const named = patch.teamId === undefined || patch.teamId === null ? undefined : await keepTeam(trx, auth.workspaceId, patch.teamId);
  const thread = await lockThread(trx, auth, threadId);
  if (!thread) throw errors.notFound('thread');
  const now = deps.now();
  const snooze = snoozeOf(thread, patch, now);
  const labels = patch.labels === undefined ? undefined : normaliseLabels(patch.labels);
  let assignee: { id: number; name: string } | null | undefined;
  if (patch.assigneeId !== undefined && patch.assigneeId !== null) {
    assignee = await findAssignableUser(trx, auth.workspaceId, patch.assigneeId);
    if (!assignee) throw errors.validation('assigneeId names no active user of this workspace');
  } else if (patch.assigneeId === null) assignee = null;
  const team =
    patch.teamId === undefined || patch.teamId === null
      ? patch.teamId
      : (named ?? (await requireTeamOf(trx, auth.workspaceId, patch.teamId)));

  const change: ThreadChange = {};
  const statusChanged = snooze.status !== thread.status || snooze.until?.getTime() !== thread.snoozed_until?.getTime();
  if (statusChanged) Object.assign(change, { status: snooze.status, snoozedUntil: snooze.until });
  const assigneeChanged = assignee !== undefined && (assignee?.id ?? null) !== thread.assignee_id;
  if (assigneeChanged) change.assigneeId = assignee?.id ?? null;
  const teamChanged = team !== undefined && (team?.id ?? null) !== thread.team_id;
  if (teamChanged) change.teamId = team?.id ?? null;
  const added = labels?.filter((l) => !thread.labels.includes(l)) ?? [];
  const removed = labels ? thread.labels.filter((l) => !labels.includes(l)) : [];
  if (added.length > 0 || removed.length > 0) change.labels = labels;
  const priorityChanged = patch.priority !== undefined && patch.priority !== thread.priority;
  if (priorityChanged) change.priority = patch.priority;
  if (Object.keys(change).length === 0) return { thread: threadResource(await viewOf(trx, thread.id)), changed: false };

  await updateThread(trx, thread.id, change, now);
  const slaEvent = slaEventOf(thread.status, snooze.status, priorityChanged || teamChanged || change.labels !== undefined);
  if (slaEvent) {
    const after = {
      ...thread,
      priority: change.priority ?? thread.priority,
      team_id: change.teamId !== undefined ? change.teamId : thread.team_id,
      labels: change.labels ?? thread.labels,
    };
    const moved = await moveSla(deps, trx, thread.workspace_id, [{ thread: after, event: slaEvent }], now);
    // Reports (docs/reports.md): resolving ends the conversation, leaving `resolved` opens the next.
    if (slaEvent === 'resolved') {
      // A person's resolution asks the contact how it went (CSAT); a key's or a rule's does not.
      if (auth.kind === 'user' || auth.kind === 'pat') await sendSurvey(deps, trx, thread, now);
      // With the clock as resolving left it: a breach its job had not told yet counts.
      const sla = moved.get(thread.id)?.sla ?? thread.sla;
      const assigneeId = change.assigneeId !== undefined ? change.assigneeId : thread.assignee_id;
      await recordResolution(trx, { ...after, sla, assignee_id: assigneeId }, now);
    } else if (slaEvent === 'opened')
      await recordOpenings(
        trx,
        [{ workspaceId: thread.workspace_id, threadId: thread.id, connectionId: thread.connection_id, reopened: true }],
        now,
      );
  }
  const actor = await actorOf(trx, auth);
  const lines: string[] = [];
  if (statusChanged) lines.push(statusLine(actor.name, snooze.status, snooze.until));
  let assignedLine = -1;
  if (assigneeChanged) {
    const previous = thread.assignee_id === null ? null : ((await userNames(trx, [thread.assignee_id])).get(thread.assignee_id) ?? null);
    assignedLine = lines.length;
    lines.push(assigneeLine(actor.name, assignee?.name ?? null, previous));
  }
  if (teamChanged) {
    const previous = thread.team_id === null ? null : ((await findTeam(trx, auth.workspaceId, thread.team_id))?.name ?? null);
    lines.push(teamLine(actor.name, team?.name ?? null, previous));
  }
  if (change.labels) lines.push(labelsLine(actor.name, added, removed));
  if (priorityChanged) lines.push(priorityLine(actor.name, patch.priority!));
  const line = (text: string): TranscriptLine => ({
    workspaceId: thread.workspace_id,
    threadId: thread.id,
    connectionId: thread.connection_id,
    text,
    authorId: actor.authorId,
  });
  const activity = await insertTranscriptLines(trx, 'activity', lines.map(line), now);
  if (statusChanged && snooze.until) await enqueueSnoozeWake(deps.boss, trx, { threadId: thread.id }, snooze.until);
  // The new assignee is told, unless they took the thread themselves (assignOnReply too).
  const assignedTo = change.assigneeId ?? null;
  const notifications =
    assignedTo === null || assignedTo === actor.authorId
      ? []
      : await insertNotifications(
          trx,
          [
            {
              workspaceId: thread.workspace_id,
              userId: assignedTo,
              type: 'assigned',
              threadId: thread.id,
              messageId: activity[assignedLine]?.id ?? null,
              actorId: actor.authorId,
            },
          ],
          now,
        );
  const view = await viewOf(trx, thread.id);
  const changes: Change[] = [
    ...activity.map((message) => ({ type: 'message.created' as const, message })),
    {
      type: 'thread.updated',
      thread: view,
      // Someone who saw it where it was may not see it now: the hub tells them it left.
      ...(assigneeChanged || teamChanged ? { formerly: { teamId: thread.team_id, assigneeId: thread.assignee_id } } : {}),
    },
    ...notifications.map((notification) => ({ type: 'notification.created' as const, notification })),
  ];
  await announce(deps, trx, changes, now);
  if (statusChanged || assigneeChanged || teamChanged) {
    // After the thread's own lock (the order every routing transaction keeps).
    await lockAssignment(trx, [thread.workspace_id]);
    if (assigneeChanged && assignee) await recordAssigned(trx, [assignee.id], now);
    // A thread resolved or given to someone else may free its assignee; one unassigned,
    // reopened or moved may now wait in a routing team's queue (and be routed right here).
    const routed = await routeWaiting(deps, trx, thread.workspace_id, now);
    if (routed.includes(thread.id)) return { thread: threadResource(await viewOf(trx, thread.id)), changed: true };
  }
  return { thread: threadResource(view), changed: true };
}

/**
 * The threads a deleted team left (`DELETE /v1/teams/:id`), read with lockTeamThreads before it
 * went: their `teamId` is null now (the foreign key). Each is told as a change of its team is,
 * in the caller's transaction: an activity line, its SLA policy matched again (not on a
 * resolved thread), `thread.updated`, and routing's queue looked at again.
 */
export async function leftDeletedTeam(deps: Deps, trx: Executor, auth: ThreadActor, threads: Selectable<ThreadsTable>[], teamName: string) {
  if (threads.length === 0) return;
  const now = deps.now();
  const workspaceId = threads[0]!.workspace_id;
  const left = threads.map((t) => ({ ...t, team_id: null }));
  await moveSla(
    deps,
    trx,
    workspaceId,
    left.filter((t) => t.status !== 'resolved').map((thread) => ({ thread, event: 'matched' as const })),
    now,
  );
  const actor = await actorOf(trx, auth);
  const lines = await insertTranscriptLines(
    trx,
    'activity',
    left.map((t) => ({
      workspaceId,
      threadId: t.id,
      connectionId: t.connection_id,
      text: teamLine(actor.name, null, teamName),
      authorId: actor.authorId,
    })),
    now,
  );
  const views = await findThreadViews(
    trx,
    left.map((t) => t.id),
  );
  await announce(
    deps,
    trx,
    [
      ...lines.map((message) => ({ type: 'message.created' as const, message })),
      ...views.map((thread) => ({ type: 'thread.updated' as const, thread })),
    ],
    now,
  );
  // Without a team, a thread of a routing connection may now wait in its queue.
  await lockAssignment(trx, [workspaceId]);
  await routeWaiting(deps, trx, workspaceId, now);
}

/**
 * `POST /v1/threads/:id/read`: an agent has read the thread; `agentLastSeenAt` is now and
 * nothing is unread. Announced as `thread.updated` (other agents' unread badges), without an
 * activity line: reading is not something that happened to the conversation.
 */
export async function markThreadRead(deps: Deps, auth: TenantAuth, threadId: number) {
  return deps.db.transaction().execute(async (trx) => {
    const thread = await lockThread(trx, auth, threadId);
    if (!thread) throw errors.notFound('thread');
    const now = deps.now();
    await updateThread(trx, thread.id, { agentLastSeenAt: now }, now);
    const view = await viewOf(trx, thread.id);
    await announce(deps, trx, [{ type: 'thread.updated', thread: view }], now);
    return threadResource(view);
  });
}
