import type { Executor } from '../db/database.js';
import { type Announcer, announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { insertNotifications, type NewNotification } from '../notifications/notifications.queries.js';
import { autoAssignedLine } from './activity.js';
import { assignUnassigned, lockAssignment, lockWaitingThreads, routingPool, type TranscriptLine } from './thread-workflow.queries.js';
import { findThreadViews } from './threads.queries.js';

/**
 * Routing (docs/teams.md "Availability and routing"): a thread of a team or connection with
 * `autoAssign` goes to an online member under their cap; with nobody, it waits, and the
 * changes that free someone up route the waiting threads in their own transaction.
 */

export interface RoutableThread {
  id: number;
  workspace_id: number;
  connection_id: number;
  team_id: number | null;
}

type Candidate = Awaited<ReturnType<typeof routingPool>>[number];

/**
 * The candidate a thread goes to: a member of its team (anyone with no team) below their cap;
 * the fewest open assigned threads, then the one given a thread least recently (never is
 * longest ago), then the lowest id.
 */
function pick(pool: Candidate[], thread: RoutableThread): Candidate | undefined {
  let best: Candidate | undefined;
  for (const c of pool) {
    if (c.workspace_id !== thread.workspace_id) continue;
    if (thread.team_id !== null && !c.team_ids.includes(thread.team_id)) continue;
    if (c.max_open_threads !== null && c.open_threads >= c.max_open_threads) continue;
    if (!best || before(c, best)) best = c;
  }
  return best;
}

function before(a: Candidate, b: Candidate): boolean {
  if (a.open_threads !== b.open_threads) return a.open_threads < b.open_threads;
  const at = a.last_assigned_at?.getTime() ?? Number.NEGATIVE_INFINITY;
  const bt = b.last_assigned_at?.getTime() ?? Number.NEGATIVE_INFINITY;
  if (at !== bt) return at < bt;
  return a.id < b.id;
}

/**
 * Routes threads (that have no assignee and are the caller's, locked) in the order given,
 * under the routing lock of their workspaces. Answers the assignments made with their
 * activity lines, already written, for the caller to announce.
 */
export async function routeThreads(
  db: Executor,
  threads: RoutableThread[],
  at: Date,
  lineOf: (assignee: string) => string = autoAssignedLine,
) {
  if (threads.length === 0) return [];
  await lockAssignment(
    db,
    threads.map((t) => t.workspace_id),
  );
  // Read after the lock: every assignment another transaction made has committed.
  const teamless = threads.some((t) => t.team_id === null);
  const teamIds = teamless ? null : [...new Set(threads.map((t) => t.team_id!))];
  return assignFrom(db, await routingPool(db, [...new Set(threads.map((t) => t.workspace_id))], teamIds), threads, at, lineOf);
}

async function assignFrom(db: Executor, pool: Candidate[], threads: RoutableThread[], at: Date, lineOf: (assignee: string) => string) {
  const chosen: { threadId: number; assigneeId: number; line: TranscriptLine }[] = [];
  for (const t of threads) {
    const best = pick(pool, t);
    if (!best) continue; // nobody may take it: it waits
    best.open_threads += 1;
    best.last_assigned_at = at;
    chosen.push({
      threadId: t.id,
      assigneeId: best.id,
      line: {
        workspaceId: t.workspace_id,
        threadId: t.id,
        connectionId: t.connection_id,
        text: lineOf(best.name),
        authorId: null,
      },
    });
  }
  return assignUnassigned(db, chosen, at);
}

/**
 * Routes one thread now, whatever its team's or connection's `autoAssign` (a rule's `route`
 * action, docs/automation.md): the thread must be the caller's, locked, and unassigned. The
 * activity line is `line(assignee)`; the assignee is told and the thread announced. Answers
 * whether someone took it (nobody may: it then stays as it was).
 */
export async function routeThreadNow(
  deps: Announcer,
  trx: Executor,
  thread: RoutableThread,
  line: (assignee: string) => string,
  at: Date,
): Promise<boolean> {
  const [done] = await routeThreads(trx, [thread], at, line);
  if (!done) return false;
  const notifications = await insertNotifications(
    trx,
    [
      {
        workspaceId: thread.workspace_id,
        userId: done.assignee_id,
        type: 'assigned',
        threadId: thread.id,
        messageId: done.line.id,
        actorId: null,
      },
    ],
    at,
  );
  const changes: Change[] = [{ type: 'message.created', message: done.line }];
  for (const view of await findThreadViews(trx, [thread.id])) changes.push({ type: 'thread.updated', thread: view });
  for (const notification of notifications) changes.push({ type: 'notification.created', notification });
  // The activity line was written with the assignment, with no attachment: none to read.
  await announce(deps, trx, changes, at, { bare: new Set([done.line.id]) });
  return true;
}

/** Waiting threads routed per round; an uncapped agent coming online takes the queue in rounds. */
export const ROUTE_WAITING_BATCH = 500;

/**
 * Routes a workspace's waiting threads, oldest first, to whoever may take them now: called
 * in the transaction of a change that may have freed someone up (a user went online, their
 * cap rose, a thread of theirs was resolved or reassigned, a thread or team started routing).
 * Writes the activity lines, tells each assignee (an `assigned` notification naming the
 * line, no actor: routing did it) and announces the threads; answers the ids it assigned.
 */
export async function routeWaiting(deps: Announcer, trx: Executor, workspaceId: number, at: Date) {
  await lockAssignment(trx, [workspaceId]);
  const pool = await routingPool(trx, [workspaceId]);
  const assigned: number[] = [];
  const changes: Change[] = [];
  const notices: NewNotification[] = [];
  const lines = new Set<number>();
  let after = new Set<number>();
  for (;;) {
    if (!pool.some((c) => c.max_open_threads === null || c.open_threads < c.max_open_threads)) break;
    const waiting = (await lockWaitingThreads(trx, workspaceId, ROUTE_WAITING_BATCH + after.size)).filter((t) => !after.has(t.id));
    if (waiting.length === 0) break;
    const done = await assignFrom(trx, pool, waiting, at, autoAssignedLine);
    for (const d of done) {
      lines.add(d.line.id);
      changes.push({ type: 'message.created', message: d.line });
      notices.push({ workspaceId, userId: d.assignee_id, type: 'assigned', threadId: d.id, messageId: d.line.id, actorId: null });
    }
    assigned.push(...done.map((d) => d.id));
    // Threads nobody could take stay in the queue; the next round looks past them.
    after = new Set([...after, ...waiting.filter((t) => !done.some((d) => d.id === t.id)).map((t) => t.id)]);
    if (waiting.length < ROUTE_WAITING_BATCH || done.length === 0) break;
  }
  if (assigned.length === 0) return assigned;
  for (const thread of await findThreadViews(trx, assigned)) changes.push({ type: 'thread.updated', thread });
  for (const notification of await insertNotifications(trx, notices, at)) changes.push({ type: 'notification.created', notification });
  // The activity lines were written here, with no attachment: none to read.
  await announce(deps, trx, changes, at, { bare: lines });
  return assigned;
}
