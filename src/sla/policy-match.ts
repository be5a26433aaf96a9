import type { Selectable } from 'kysely';
import type { SlaPoliciesTable, ThreadPriority } from '../db/types.js';
import { type PolicyTargets, SLA_TARGETS, type SlaTarget, targetMs } from './sla-state.js';

/** What a policy's conditions read of a thread. */
export interface MatchedThread {
  connection_id: number;
  team_id: number | null;
  priority: ThreadPriority;
  labels: string[];
}

const COLUMN: Record<SlaTarget, 'first_response' | 'next_response' | 'resolution'> = {
  firstResponse: 'first_response',
  nextResponse: 'next_response',
  resolution: 'resolution',
};

/** The first of `policies` (enabled, in position order) whose every given condition matches the thread. */
export function matchPolicy(policies: Selectable<SlaPoliciesTable>[], thread: MatchedThread): PolicyTargets | null {
  const policy = policies.find(({ conditions: c }) => {
    if (c.priorities && !c.priorities.includes(thread.priority)) return false;
    if (c.connectionIds && !c.connectionIds.includes(thread.connection_id)) return false;
    if (c.teamIds && (thread.team_id === null || !c.teamIds.includes(thread.team_id))) return false;
    if (c.labels && !c.labels.some((l) => thread.labels.includes(l))) return false;
    return true;
  });
  if (!policy) return null;
  const ms: PolicyTargets['targetMs'] = {};
  for (const t of SLA_TARGETS) {
    const iso = policy[COLUMN[t]];
    if (iso !== null) ms[t] = targetMs(iso, t);
  }
  return { id: policy.id, businessHoursOnly: policy.business_hours_only, targetMs: ms };
}
