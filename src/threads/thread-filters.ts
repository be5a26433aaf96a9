import { type Static, Type } from 'typebox';
import type { TenantAuth } from '../auth/auth.js';
import type { SlaStatus, ThreadPriority, ThreadStatus } from '../db/types.js';
import { errors } from '../http/errors.js';
import { SLA_STATUSES } from '../sla/sla-state.js';
import { THREAD_PRIORITIES, THREAD_STATUSES } from './threads.resources.js';

/** What `GET /v1/threads` may narrow the list to; absent fields do not filter. */
export interface ThreadFilters {
  statuses?: ThreadStatus[];
  /** A user's id, or `none` for threads nobody is assigned to. */
  assignee?: number | 'none';
  connectionId?: number;
  contactId?: number;
  label?: string;
  /** A team's id, or `none` for threads of no team. */
  team?: number | 'none';
  priorities?: ThreadPriority[];
  slaStatus?: SlaStatus;
  /** `sla`: the nearest SLA due time first (threads without a running clock are left out). */
  sort?: 'sla';
}

/** A label as threads carry it: 1–50 of a-z 0-9 - _ : once lower-cased (docs/conversations.md). */
export const LABEL_PATTERN = /^[a-z0-9_:-]{1,50}$/;

/** Query strings stay strings in the schema; parseThreadFilters judges them with a message per field. */
export const ThreadFilterQuery = {
  status: Type.Optional(Type.String({ description: `one status or a comma list of ${THREAD_STATUSES.join(', ')}; default every status` })),
  assigneeId: Type.Optional(Type.String({ description: "a user's id, `me` (the signed-in user) or `none` (unassigned)" })),
  connectionId: Type.Optional(Type.String({ description: 'only threads of this connection' })),
  contactId: Type.Optional(Type.String({ description: 'only threads with this contact' })),
  label: Type.Optional(Type.String({ description: 'only threads carrying this label (matched lower-cased)' })),
  teamId: Type.Optional(Type.String({ description: "a team's id, or `none` (threads of no team)" })),
  priority: Type.Optional(Type.String({ description: `one priority or a comma list of ${THREAD_PRIORITIES.join(', ')}` })),
  slaStatus: Type.Optional(Type.String({ description: `only threads whose SLA is ${SLA_STATUSES.join(', ')} (docs/sla.md)` })),
  sort: Type.Optional(
    Type.String({
      description: '`sla`: the nearest SLA due time first, only threads with a clock running; default most recently active first',
    }),
  ),
};
const ThreadFilterQueryObject = Type.Object(ThreadFilterQuery);
export type ThreadFilterQuery = Static<typeof ThreadFilterQueryObject>;

const ID = /^[1-9][0-9]{0,15}$/;
const INT_MAX = 2_147_483_647;

function id(field: string, raw: string, max: number): number {
  const n = ID.test(raw) ? Number(raw) : NaN;
  if (!(n <= max)) throw errors.validation(`${field}: expected a positive integer id, got "${raw.slice(0, 40)}"`);
  return n;
}

/**
 * The filters of a thread list, or 422 naming the field that is wrong. `assigneeId=me` is the
 * caller's own user, so it needs a person (a JWT or personal-access token), never an API key.
 */
export function parseThreadFilters(query: ThreadFilterQuery, auth: TenantAuth): ThreadFilters {
  const filters: ThreadFilters = {};
  if (query.status !== undefined) {
    const parts = query.status.split(',').map((s) => s.trim());
    const bad = parts.find((s) => !(THREAD_STATUSES as readonly string[]).includes(s));
    if (bad !== undefined)
      throw errors.validation(`status: expected ${THREAD_STATUSES.join(', ')} (one, or a comma list), got "${bad.slice(0, 40)}"`);
    filters.statuses = [...new Set(parts as ThreadStatus[])];
  }
  if (query.assigneeId !== undefined) {
    const raw = query.assigneeId.trim();
    if (raw === 'none') filters.assignee = 'none';
    else if (raw === 'me') {
      if (auth.kind === 'api_key') throw errors.validation('assigneeId: "me" needs a signed-in user; an API key has none (pass a user id)');
      filters.assignee = auth.userId;
    } else filters.assignee = id('assigneeId', raw, INT_MAX);
  }
  if (query.connectionId !== undefined) filters.connectionId = id('connectionId', query.connectionId.trim(), Number.MAX_SAFE_INTEGER);
  if (query.contactId !== undefined) filters.contactId = id('contactId', query.contactId.trim(), Number.MAX_SAFE_INTEGER);
  if (query.label !== undefined) {
    const label = query.label.trim().toLowerCase();
    if (!LABEL_PATTERN.test(label)) throw errors.validation('label: expected 1–50 characters of a-z 0-9 - _ :');
    filters.label = label;
  }
  if (query.teamId !== undefined) {
    const raw = query.teamId.trim();
    filters.team = raw === 'none' ? 'none' : id('teamId', raw, INT_MAX);
  }
  if (query.priority !== undefined) {
    const parts = query.priority.split(',').map((s) => s.trim());
    const bad = parts.find((s) => !(THREAD_PRIORITIES as readonly string[]).includes(s));
    if (bad !== undefined)
      throw errors.validation(`priority: expected ${THREAD_PRIORITIES.join(', ')} (one, or a comma list), got "${bad.slice(0, 40)}"`);
    filters.priorities = [...new Set(parts as ThreadPriority[])];
  }
  if (query.slaStatus !== undefined) {
    const raw = query.slaStatus.trim();
    if (!(SLA_STATUSES as readonly string[]).includes(raw))
      throw errors.validation(`slaStatus: expected ${SLA_STATUSES.join(', ')}, got "${raw.slice(0, 40)}"`);
    filters.slaStatus = raw as SlaStatus;
  }
  if (query.sort !== undefined) {
    if (query.sort.trim() !== 'sla') throw errors.validation(`sort: expected "sla", got "${query.sort.slice(0, 40)}"`);
    filters.sort = 'sla';
  }
  return filters;
}
