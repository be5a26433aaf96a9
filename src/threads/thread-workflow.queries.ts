import { type Selectable, sql } from 'kysely';
import { lockKeys } from '../db/advisory-locks.js';
import { type Executor, PREPARED } from '../db/database.js';
import { MESSAGE_COLUMNS, messageColumnsSql } from '../db/message-columns.js';
import type { MessagesTable, ThreadPriority, ThreadStatus } from '../db/types.js';
import { type ThreadReader, visibleThreads } from './visibility.js';

/** SQL of working a conversation: status, assignment, activity lines, read markers, snoozes. */

/**
 * Opens threads again that a new inbound message arrived on (resolved, pending or snoozed),
 * one statement for a batch. Returns the threads it changed.
 */
export async function reopenThreads(db: Executor, ids: number[], at: Date) {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: number; workspace_id: number; connection_id: number; assignee_id: number | null }>`
    UPDATE threads SET status = 'open', snoozed_until = NULL, updated_at = ${at}
    WHERE id = ANY(${ids}::bigint[]) AND status <> 'open'
    RETURNING id, workspace_id, connection_id, assignee_id`.execute(db);
  return rows;
}

/**
 * Serialises routing per workspace until the transaction ends (advisory locks, taken in a
 * fixed order). Without it, two transactions of one workspace would each count the agents'
 * open threads before the other commits, both pick the same agent and pass their cap.
 * Taken after the thread rows a transaction changes, never before: whoever holds it waits
 * for no thread (the queue is read with SKIP LOCKED) and no user row (routing writes none).
 */
export async function lockAssignment(db: Executor, workspaceIds: number[]) {
  await lockKeys(
    db,
    [...new Set(workspaceIds)].map((w) => `auto-assign:${w}`),
  );
}

/**
 * Who routing may give these workspaces' threads to, lowest id first: active users whose roles
 * include `agent` or `admin`, or who have none (never a platform `operator`), and whose
 * availability is `online`; with their open assigned threads, their cap, when they were last
 * given a thread and the teams they are members of. With `teamIds`, only members of those
 * teams (threads that all have a team need no one else counted).
 * Planning it took as long as running it (0.25 ms), in every batch that routes: it is
 * PREPARED, and the arrays go in as the value of a subquery, which the planner does not look
 * into, so the plan of a one-workspace, one-team call is the same as the generic plan and
 * PostgreSQL settles on the generic one after five calls (the plan is the same index probes).
 */
export async function routingPool(db: Executor, workspaceIds: number[], teamIds: number[] | null = null) {
  if (workspaceIds.length === 0) return [];
  const { rows } = await sql<{
    id: number;
    workspace_id: number;
    name: string;
    max_open_threads: number | null;
    last_assigned_at: Date | null;
    open_threads: number;
    team_ids: number[];
  }>`${PREPARED}
    SELECT u.id, u.workspace_id, u.name, u.max_open_threads, a.last_assigned_at,
      (SELECT count(*)::int FROM threads t WHERE t.workspace_id = u.workspace_id AND t.status = 'open' AND t.assignee_id = u.id) AS open_threads,
      ARRAY(SELECT m.team_id FROM team_members m WHERE m.user_id = u.id) AS team_ids
    FROM users u
    LEFT JOIN user_assignment_times a ON a.user_id = u.id
    WHERE u.workspace_id = ANY((SELECT ${workspaceIds}::int[])::int[])
      AND u.active
      AND u.availability = 'online'
      AND NOT ('operator' = ANY(u.roles))
      AND (u.roles && ARRAY['agent', 'admin']::text[] OR cardinality(u.roles) = 0)
      ${teamIds === null ? sql`` : sql`AND EXISTS (SELECT 1 FROM team_members m WHERE m.user_id = u.id AND m.team_id = ANY((SELECT ${teamIds}::int[])::int[]))`}
    ORDER BY u.workspace_id, u.id`.execute(db);
  return rows;
}

/** Remembers that these users were given a thread at `at` (routing's tie-break). */
export async function recordAssigned(db: Executor, userIds: number[], at: Date) {
  if (userIds.length === 0) return;
  await sql`
    INSERT INTO user_assignment_times (user_id, last_assigned_at)
    SELECT DISTINCT u, ${at}::timestamptz FROM unnest(${userIds}::int[]) AS u
    ON CONFLICT (user_id) DO UPDATE SET last_assigned_at = EXCLUDED.last_assigned_at`.execute(db);
}

/**
 * Routing's queue in a workspace: open threads with no assignee whose team or connection has
 * `autoAssign`, oldest first, locked; never a thread of a deleted connection (read-only: nobody
 * can answer it). Threads another transaction holds (an inbound batch that
 * routes them itself) are skipped rather than waited for: the caller holds the routing lock,
 * and that batch may be waiting for it.
 */
export async function lockWaitingThreads(db: Executor, workspaceId: number, limit: number) {
  const { rows } = await sql<{ id: number; workspace_id: number; connection_id: number; team_id: number | null }>`
    SELECT t.id, t.workspace_id, t.connection_id, t.team_id
    FROM threads t
    JOIN connections c ON c.id = t.connection_id
    LEFT JOIN teams tm ON tm.id = t.team_id
    WHERE t.workspace_id = ${workspaceId} AND t.status = 'open' AND t.assignee_id IS NULL
      AND c.deleted_at IS NULL AND (c.auto_assign OR tm.auto_assign)
    ORDER BY t.created_at, t.id
    LIMIT ${limit}
    FOR UPDATE OF t SKIP LOCKED`.execute(db);
  return rows;
}

/**
 * Sets the assignee of threads that still have none, remembers when each assignee was given
 * one (as recordAssigned does) and writes each assignment's activity line, in one statement;
 * answers the threads it changed with their new assignee and line, in the order given.
 * PREPARED: planning the `WITH` took a third of its time.
 */
export async function assignUnassigned(
  db: Executor,
  assignments: { threadId: number; assigneeId: number; line: TranscriptLine }[],
  at: Date,
) {
  if (assignments.length === 0) return [];
  const { rows } = await sql<Selectable<MessagesTable> & { routed_assignee_id: number }>`${PREPARED}
    WITH v AS (
      SELECT * FROM unnest(${assignments.map((a) => a.threadId)}::bigint[], ${assignments.map((a) => a.assigneeId)}::int[],
                           ${assignments.map((a) => a.line.workspaceId)}::int[], ${assignments.map((a) => a.line.connectionId)}::bigint[],
                           ${assignments.map((a) => a.line.text)}::text[], ${assignments.map((a) => a.line.authorId)}::int[])
        WITH ORDINALITY AS v(id, assignee_id, w, cn, tx, au, n)
    ), done AS (
      UPDATE threads t SET assignee_id = v.assignee_id, updated_at = ${at}
      FROM v
      WHERE t.id = v.id AND t.assignee_id IS NULL
      RETURNING t.id, t.assignee_id
    ), times AS (
      INSERT INTO user_assignment_times (user_id, last_assigned_at)
      SELECT DISTINCT assignee_id, ${at}::timestamptz FROM done
      ON CONFLICT (user_id) DO UPDATE SET last_assigned_at = EXCLUDED.last_assigned_at
    ), lines AS (
      INSERT INTO messages (workspace_id, thread_id, connection_id, direction, external_id, text, status, kind, private, author_id, created_at, updated_at)
      SELECT v.w, v.id, v.cn, 'outbound', NULL, v.tx, 'sent', 'activity', true, v.au, ${at}::timestamptz, ${at}::timestamptz
      FROM v JOIN done ON done.id = v.id
      ORDER BY v.n
      RETURNING ${messageColumnsSql()}
    )
    SELECT lines.*, done.assignee_id AS routed_assignee_id FROM lines JOIN done ON done.id = lines.thread_id
    ORDER BY lines.id`.execute(db);
  return rows.map(({ routed_assignee_id, ...line }) => ({ id: Number(line.thread_id), assignee_id: routed_assignee_id, line }));
}

export interface TranscriptLine {
  workspaceId: number;
  threadId: number;
  connectionId: number;
  text: string;
  authorId: number | null;
  /** A note the workspace's model wrote (docs/ai.md). */
  ai?: boolean;
  /** A note an automation rule wrote (docs/automation.md). */
  automation?: boolean;
}

/**
 * Writes lines into transcripts that never leave the service: activity lines (what happened
 * to the thread) or private notes. They are `sent` (nothing to send) and never change the
 * thread's preview. One statement however many.
 */
export async function insertTranscriptLines(db: Executor, kind: 'activity' | 'note', lines: TranscriptLine[], at: Date) {
  if (lines.length === 0) return [];
  const { rows } = await sql<Selectable<MessagesTable>>`
    INSERT INTO messages (workspace_id, thread_id, connection_id, direction, external_id, text, status, kind, private, author_id, ai, automation, created_at, updated_at)
    SELECT w, th, cn, 'outbound', NULL, tx, 'sent', ${kind}, true, au, a, am, ${at}::timestamptz, ${at}::timestamptz
    FROM unnest(${lines.map((l) => l.workspaceId)}::int[], ${lines.map((l) => l.threadId)}::bigint[], ${lines.map((l) => l.connectionId)}::bigint[],
                ${lines.map((l) => l.text)}::text[], ${lines.map((l) => l.authorId)}::int[], ${lines.map((l) => l.ai === true)}::boolean[],
                ${lines.map((l) => l.automation === true)}::boolean[])
         WITH ORDINALITY AS v(w, th, cn, tx, au, a, am, n)
    ORDER BY n
    RETURNING ${messageColumnsSql()}`.execute(db);
  return rows;
}

/** The users a note names, kept on it; answers the note as it now is. */
export async function setMentions(db: Executor, messageId: number, userIds: number[]) {
  return db
    .updateTable('messages')
    .set({ mentions: userIds })
    .where('id', '=', messageId)
    .returning(MESSAGE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** A team's threads, locked, lowest id first: those its deletion leaves without a team. */
export async function lockTeamThreads(db: Executor, workspaceId: number, teamId: number) {
  return db
    .selectFrom('threads')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('team_id', '=', teamId)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * A thread the reader sees, locked until the transaction ends; undefined for any other.
 * Its contact is kept first (KEY SHARE), in the order a merge takes them (contacts, then their
 * threads): a change that writes the thread twice checks its contact's key on the second
 * write, and taking that after the thread's lock would deadlock with a merge of that contact.
 * Waiting here, the change sees the merge's outcome (the thread moved or folded away).
 */
export async function lockThread(db: Executor, reader: ThreadReader, id: number) {
  await keepThreadContact(db, reader.workspaceId, id);
  return db
    .selectFrom('threads')
    .selectAll()
    .where('workspace_id', '=', reader.workspaceId)
    .where('id', '=', id)
    .where(visibleThreads(reader))
    .forUpdate()
    .executeTakeFirst();
}

/**
 * lockThread for a caller that reads the thread itself afterwards (a reply, read by every
 * reply): the same locks in the same order, as two prepared statements that return nothing.
 * Whether the reader sees the thread is the caller's read to answer; the read comes after the
 * lock, in a statement of its own, so it sees what a change that held the lock committed.
 */
export async function lockThreadRow(db: Executor, workspaceId: number, id: number): Promise<void> {
  await keepThreadContact(db, workspaceId, id);
  await sql`${PREPARED} SELECT 1 FROM threads WHERE id = ${id} AND workspace_id = ${workspaceId} FOR UPDATE`.execute(db);
}

async function keepThreadContact(db: Executor, workspaceId: number, id: number): Promise<void> {
  await sql`${PREPARED} SELECT 1 FROM contacts c JOIN threads t ON t.contact_id = c.id
    WHERE t.id = ${id} AND t.workspace_id = ${workspaceId} FOR KEY SHARE OF c`.execute(db);
}

export interface ThreadChange {
  status?: ThreadStatus;
  snoozedUntil?: Date | null;
  assigneeId?: number | null;
  labels?: string[];
  agentLastSeenAt?: Date;
  teamId?: number | null;
  priority?: ThreadPriority;
}

export async function updateThread(db: Executor, id: number, change: ThreadChange, at: Date) {
  await db
    .updateTable('threads')
    .set({
      status: change.status,
      snoozed_until: change.snoozedUntil,
      assignee_id: change.assigneeId,
      labels: change.labels,
      team_id: change.teamId,
      priority: change.priority,
      agent_last_seen_at: change.agentLastSeenAt,
      // Read now: nothing that arrived before is unread.
      ...(change.agentLastSeenAt ? { unread_count: 0 } : {}),
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
}

/** An active user of the workspace who may be assigned a thread, with the name activity lines use. */
export async function findAssignableUser(db: Executor, workspaceId: number, id: number) {
  return db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('active', '=', true)
    .executeTakeFirst();
}

/** Names of users, for activity lines. */
export async function userNames(db: Executor, ids: number[]) {
  if (ids.length === 0) return new Map<number, string>();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

export async function apiKeyName(db: Executor, id: number) {
  const row = await db.selectFrom('api_keys').select('name').where('id', '=', id).executeTakeFirst();
  return row?.name;
}

/** The most snoozes one sweep ends; the next sweep takes the rest. */
export const SNOOZE_SWEEP_LIMIT = 500;

/**
 * Opens snoozed threads whose time has come: those of `ids`, or with `ids` null any of the
 * database's (at most SNOOZE_SWEEP_LIMIT, through threads_snoozed_idx). A thread snoozed
 * again until later, or opened meanwhile, is left alone. Returns the threads it opened.
 */
export async function wakeSnoozed(db: Executor, ids: number[] | null, at: Date) {
  if (ids !== null && ids.length === 0) return [];
  const { rows } = await sql<{ id: number; workspace_id: number; connection_id: number }>`
    UPDATE threads SET status = 'open', snoozed_until = NULL, updated_at = ${at}
    WHERE id IN (
      SELECT id FROM threads
      WHERE status = 'snoozed' AND snoozed_until <= ${at} ${ids === null ? sql`` : sql`AND id = ANY(${ids}::bigint[])`}
      ORDER BY snoozed_until LIMIT ${SNOOZE_SWEEP_LIMIT}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, workspace_id, connection_id`.execute(db);
  return rows;
}
