import { type RawBuilder, sql } from 'kysely';
import { type Executor, PREPARED } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../db/message-columns.js';
import { BY_CREATED, keysetPage, type SortKey } from '../db/pages.js';
import { THREAD_COLUMNS } from '../db/thread-columns.js';
import type { CursorRequest } from '../http/pagination.js';
import type { ThreadFilters } from './thread-filters.js';
import type { ThreadView } from './threads.resources.js';
import { type ThreadReader, visibleThreads } from './visibility.js';

/** Reading threads as the API shows them: the tenant's list, one thread, a transcript. */

const BY_LAST_MESSAGE: SortKey = { at: 'threads.last_message_at', id: 'threads.id' };
/** `?sort=sla`: the nearest due time first (threads_sla_due_idx). */
const BY_SLA_DUE: SortKey = { at: 'threads.sla_due_at', id: 'threads.id', ascending: true };

/**
 * A label carried by at most this many of a workspace's threads is rare: the page reads those
 * threads by id. A commoner label is found by walking the list in page order, where about one
 * thread in (threads / carriers) matches. Measured at 100,000 threads (docs/performance.md,
 * "Conversations"): an id is about 4 µs, a walked thread about 1 µs.
 */
export const RARE_LABEL_THREADS = 1000;

/**
 * The ids of the workspace's threads that carry `label` when they are few (RARE_LABEL_THREADS
 * at most), else undefined. Read from thread_labels (kept by a trigger on threads), which is
 * keyed by workspace: threads.labels' GIN index is not, so it cannot tell a label rare here
 * from one common in another workspace, and the planner then walks every thread of this one.
 */
async function rareLabelThreadIds(db: Executor, workspaceId: number, label: string): Promise<number[] | undefined> {
  const { rows } = await sql<{ thread_id: string }>`
    SELECT thread_id FROM thread_labels WHERE workspace_id = ${workspaceId} AND name = ${label}
    LIMIT ${RARE_LABEL_THREADS + 1}`.execute(db);
  return rows.length > RARE_LABEL_THREADS ? undefined : rows.map((r) => Number(r.thread_id));
}

/** Every column of a thread, qualified: named once, for every read of threadViews. */
const THREAD_SELECTION = THREAD_COLUMNS.map((c) => `threads.${c}` as const);

/**
 * Threads with what the Thread resource shows beside their own columns: the channel and the
 * contact's name. The columns are named (THREAD_COLUMNS), so a statement of it may be prepared.
 */
function threadViews(db: Executor) {
  return db
    .selectFrom('threads')
    .innerJoin('connections', 'connections.id', 'threads.connection_id')
    .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
    .select(THREAD_SELECTION)
    .select(['connections.integration_key', 'contacts.name as contact_name']);
}

/** The threads of the reader's workspace that the reader may see (./visibility.ts), as they are shown. */
function readableThreads(db: Executor, reader: ThreadReader) {
  return threadViews(db).where('threads.workspace_id', '=', reader.workspaceId).where(visibleThreads(reader));
}

/**
 * The filters a list and its counts share (each applies status and assignee its own way), so
 * a view's number is always its list's length.
 */
function narrowedBy(filters: Omit<ThreadFilters, 'assignee' | 'statuses'>): RawBuilder<boolean> {
  const { connectionId, contactId, label, team, priorities, slaStatus, sort } = filters;
  const conditions: RawBuilder<unknown>[] = [];
  if (connectionId !== undefined) conditions.push(sql`threads.connection_id = ${connectionId}`);
  if (contactId !== undefined) conditions.push(sql`threads.contact_id = ${contactId}`);
  if (team === 'none') conditions.push(sql`threads.team_id IS NULL`);
  else if (team !== undefined) conditions.push(sql`threads.team_id = ${team}`);
  if (label !== undefined) conditions.push(sql`threads.labels @> ARRAY[${label}]::text[]`);
  if (priorities !== undefined) conditions.push(sql`threads.priority IN (${sql.join(priorities)})`);
  if (slaStatus !== undefined) conditions.push(sql`threads.sla_status = ${slaStatus}`);
  if (sort === 'sla') conditions.push(sql`threads.sla_due_at IS NOT NULL`);
  return conditions.length === 0 ? sql<boolean>`TRUE` : sql<boolean>`(${sql.join(conditions, sql` AND `)})`;
}

/**
 * The threads the reader sees, most recently active first, one cursor page, narrowed by
 * `filters`. One status is an equality (not a list) so that threads_filter_idx returns rows
 * already in page order.
 */
export async function listThreads(db: Executor, reader: ThreadReader, filters: ThreadFilters, page: CursorRequest) {
  const { workspaceId } = reader;
  const { statuses, assignee, label } = filters;
  // Outside a transaction a thread may lose the label between the two reads: the page still
  // tests threads.labels, so it never shows a thread without it.
  const rareIds = label === undefined ? undefined : await rareLabelThreadIds(db, workspaceId, label);
  const q = readableThreads(db, reader)
    .$if(statuses?.length === 1, (q) => q.where('threads.status', '=', statuses![0]!))
    .$if((statuses?.length ?? 0) > 1, (q) => q.where('threads.status', 'in', statuses!))
    .$if(assignee === 'none', (q) => q.where('threads.assignee_id', 'is', null))
    .$if(typeof assignee === 'number', (q) => q.where('threads.assignee_id', '=', assignee as number))
    .where(narrowedBy(filters))
    .$if(rareIds !== undefined, (q) => q.where(sql<boolean>`threads.id = ANY(${rareIds}::bigint[])`));
  return keysetPage(q, filters.sort === 'sla' ? BY_SLA_DUE : BY_LAST_MESSAGE, page);
}

/**
 * How many threads the reader sees under `filters` (the assignee aside): all of them, the
 * unassigned ones and those assigned to `me` (null: no person asked). One statement, counted
 * with FILTER, so the three views' numbers agree with each other at one moment.
 */
export async function countThreads(db: Executor, reader: ThreadReader, filters: Omit<ThreadFilters, 'assignee'>, me: number | null) {
  const { statuses } = filters;
  const row = await db
    .selectFrom('threads')
    .where('threads.workspace_id', '=', reader.workspaceId)
    .where(visibleThreads(reader))
    .$if(statuses !== undefined && statuses.length > 0, (q) => q.where('threads.status', 'in', statuses!))
    .where(narrowedBy(filters))
    .select([
      sql<string>`count(*)`.as('all'),
      sql<string>`count(*) FILTER (WHERE threads.assignee_id IS NULL)`.as('unassigned'),
      sql<string>`count(*) FILTER (WHERE threads.assignee_id = ${me ?? 0})`.as('mine'),
    ])
    .executeTakeFirstOrThrow();
  return { mine: me === null ? null : Number(row.mine), unassigned: Number(row.unassigned), all: Number(row.all) };
}

/** One thread the reader may see; undefined for any other (another workspace's, another team's). */
export async function findThread(db: Executor, reader: ThreadReader, id: number) {
  return readableThreads(db, reader).where('threads.id', '=', id).executeTakeFirst();
}

/** A thread's preview, when its last message turns out to be other than it was written (a visitor's files put on it). */
export async function setThreadPreview(db: Executor, id: number, preview: string) {
  await db.updateTable('threads').set({ last_message_preview: preview }).where('id', '=', id).execute();
}

/**
 * Threads as the API shows them, by id, for what announces them (any workspace): every reply
 * and workflow change reads one, so the statement is prepared (one array parameter, its
 * columns named).
 */
export async function findThreadViews(db: Executor, ids: number[]): Promise<ThreadView[]> {
  if (ids.length === 0) return [];
  return threadViews(db).where('threads.id', '=', sql<number>`ANY(${ids}::bigint[])`).modifyEnd(PREPARED).execute();
}

/** A thread's messages, newest first, one cursor page. */
export async function listMessages(db: Executor, threadId: number, page: CursorRequest) {
  return keysetPage(db.selectFrom('messages').select(MESSAGE_COLUMNS).where('thread_id', '=', threadId), BY_CREATED, page);
}
