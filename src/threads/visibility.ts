import { type Expression, type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { ThreadPlace } from '../realtime/publish.js';
import { WORKSPACE_SETTINGS } from '../workspaces/workspace-settings.js';

/**
 * Who sees which thread (docs/teams.md, "Who sees what"). With the workspace setting
 * `restrictAgentsToTeams`, a user without the `admin` role sees only the threads of their
 * teams, the threads of no team and the threads assigned to them; every other thread does not
 * exist for them (404, absent from lists, search, label counts and their realtime socket).
 * Admins, API keys and the platform operator see every thread of the workspace.
 *
 * The rule is SQL, read in the statement that reads the threads: the setting and the user's
 * teams are looked up there (one uncorrelated subquery each, evaluated once per statement), so
 * a change of either applies to the next request without any cache to invalidate.
 */

/**
 * Who reads threads: a tenant caller (a TenantAuth is one: a person with roles, or an API key),
 * or platform staff reading a workspace they name. Spelled out rather than imported so that
 * queries can take it without depending on how a request is authenticated.
 */
export type ThreadReader =
  | Person
  | { kind: 'api_key'; workspaceId: number }
  | { kind: 'operator'; workspaceId: number }
  | { kind: 'automation'; workspaceId: number };
type Person = { kind: 'user' | 'pat'; workspaceId: number; userId: number; roles: string[] };

const SETTING = 'restrictAgentsToTeams' satisfies keyof typeof WORKSPACE_SETTINGS;

/** The person the rule applies to; undefined for a reader who sees every thread whatever the setting. */
function restrictable(reader: ThreadReader): Person | undefined {
  if (reader.kind === 'api_key' || reader.kind === 'operator' || reader.kind === 'automation') return undefined;
  return reader.roles.includes('admin') ? undefined : reader;
}

/** The workspace's `restrictAgentsToTeams`, its default when never set. */
function restricted(workspaceId: number) {
  return sql<boolean>`COALESCE((SELECT (w.settings->>${SETTING})::boolean FROM workspaces w WHERE w.id = ${workspaceId}), ${WORKSPACE_SETTINGS[SETTING].fallback})`;
}

/** Whether the workspace restricts agents to their teams' threads (its setting, or the default). */
export async function restrictsAgents(db: Executor, workspaceId: number): Promise<boolean> {
  const { rows } = await sql<{ on: boolean }>`SELECT ${restricted(workspaceId)} AS on`.execute(db);
  return rows[0]?.on === true;
}

/** The rule itself, for a user who is not an admin: `thread` is the alias of a threads row. */
function seenByUser(thread: string, userId: number | Expression<number>, workspaceId: number): RawBuilder<boolean> {
  const team = sql.ref(`${thread}.team_id`);
  return sql<boolean>`(NOT ${restricted(workspaceId)} OR ${team} IS NULL OR ${sql.ref(`${thread}.assignee_id`)} = ${userId}
    OR ${team} IN (SELECT tm.team_id FROM team_members tm WHERE tm.user_id = ${userId}))`;
}

/**
 * The threads `reader` may see, as a condition on the threads row named `thread` (its table
 * or alias): `.where(visibleThreads(auth))`. Every read of threads for a caller goes through it.
 */
export function visibleThreads(reader: ThreadReader, thread = 'threads'): RawBuilder<boolean> {
  const person = restrictable(reader);
  return person ? seenByUser(thread, person.userId, person.workspaceId) : sql<boolean>`TRUE`;
}

/**
 * The same rule for a row that names its thread by id (a message, an attachment's message):
 * `.where(visibleThreadId(auth, sql.ref('messages.thread_id')))`. The setting is tested first,
 * so a workspace that does not restrict reads no thread row for it. The thread is read by a
 * scalar subquery, one primary-key probe per row tested: an EXISTS here may be planned as a hash
 * of every thread of the workspace, built for a search page that tests a few thousand messages.
 */
export function visibleThreadId(reader: ThreadReader, threadId: Expression<unknown>): RawBuilder<boolean> {
  const person = restrictable(reader);
  if (!person) return sql<boolean>`TRUE`;
  return sql<boolean>`(NOT ${restricted(person.workspaceId)}
    OR COALESCE((SELECT ${seenByUser('vt', person.userId, person.workspaceId)} FROM threads vt WHERE vt.id = ${threadId}), false))`;
}

/**
 * Whether the rule narrows what `reader` sees, as a condition (false for admins and keys, else
 * the workspace's setting): for a read that is shaped differently when it does, such as counts
 * that are kept beside the threads and must otherwise not read them (`CASE WHEN … THEN … END`).
 */
export function restrictsReader(reader: ThreadReader): RawBuilder<boolean> {
  const person = restrictable(reader);
  return person ? restricted(person.workspaceId) : sql<boolean>`FALSE`;
}

/** For each user: every thread of the workspace (`'all'`), or which of `threadIds` they see. */
export type ThreadsSeen = Map<number, 'all' | Set<number>>;

/** A place as a key of `Sights.places`. */
export const placeKey = (p: ThreadPlace) => `${p.teamId}|${p.assigneeId}`;

export interface Sights {
  threads: ThreadsSeen;
  /** For each user not seeing every thread: which of the `places` asked they would see a thread in (placeKey). */
  places: Map<number, Set<string>>;
}

/**
 * Which of `threadIds` each of `userIds` sees, as they are now (roles, teams, the setting), in
 * one statement: the realtime hub asks it once per batch of events. A user of another workspace
 * or no longer there is absent from the answer and so sees nothing. `places`: where threads
 * were before a move, asked by the same rule (with today's teams), so the hub can tell who saw
 * a thread there and does not any more.
 */
export async function threadsSeenBy(
  db: Executor,
  workspaceId: number,
  userIds: number[],
  threadIds: number[],
  places: readonly ThreadPlace[] = [],
): Promise<Sights> {
  const { rows } = await sql<{ id: number; sees_all: boolean; thread_ids: (number | string)[]; places: number[] }>`
    SELECT u.id, ('admin' = ANY(u.roles) OR NOT ${restricted(workspaceId)}) AS sees_all,
      ARRAY(SELECT t.id FROM threads t
            WHERE t.id = ANY(${threadIds}::bigint[]) AND t.workspace_id = ${workspaceId} AND ${seenByUser('t', sql.ref('u.id'), workspaceId)}) AS thread_ids,
      ARRAY(SELECT p.n::int FROM unnest(${places.map((p) => p.teamId)}::int[], ${places.map((p) => p.assigneeId)}::int[])
              WITH ORDINALITY AS p(team_id, assignee_id, n)
            WHERE ${seenByUser('p', sql.ref('u.id'), workspaceId)}) AS places
    FROM users u
    WHERE u.id = ANY(${userIds}::int[]) AND u.workspace_id = ${workspaceId}`.execute(db);
  return {
    threads: new Map(rows.map((r) => [r.id, r.sees_all ? 'all' : new Set(r.thread_ids.map(Number))])),
    places: new Map(rows.filter((r) => !r.sees_all).map((r) => [r.id, new Set(r.places.map((n) => placeKey(places[n - 1]!)))])),
  };
}

/**
 * Of `userIds` (users of the workspace), those who do not see thread `threadId`: the people a
 * note may not name, since its notification would point at a thread that does not exist for them.
 * (The rule is NULL where an unassigned thread's assignee is compared: IS NOT TRUE, not NOT.)
 */
export async function usersNotSeeing(db: Executor, workspaceId: number, threadId: number, userIds: number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    SELECT u.id FROM users u JOIN threads t ON t.id = ${threadId}
    WHERE u.workspace_id = ${workspaceId} AND u.id = ANY(${userIds}::int[]) AND NOT ('admin' = ANY(u.roles))
      AND ${seenByUser('t', sql.ref('u.id'), workspaceId)} IS NOT TRUE
    ORDER BY u.id`.execute(db);
  return rows.map((r) => r.id);
}
