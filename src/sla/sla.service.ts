import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import type { BusinessHoursValue } from '../db/types.js';
import { workspaceSettings } from '../workspaces/workspace-settings.js';
import { type MatchedThread, matchPolicy } from './policy-match.js';
import { currentOpening, lockSlaThread, type SlaColumns, teamHours, writeSla } from './sla.queries.js';
import { enqueueSlaClocks } from './sla-clock.enqueue.js';
import { listPolicies } from './sla-policies.queries.js';
import {
  changePolicy,
  contactWrote,
  lateSla,
  nearestDue,
  openSla,
  type PolicyTargets,
  replied,
  resolved,
  type SlaState,
  type SlaTarget,
  statusOf,
  wakeUps,
} from './sla-state.js';

/**
 * Moving threads' SLA clocks (docs/sla.md), in the caller's transaction: what happened to
 * each thread, the clock that follows (./sla-state.ts), its columns written in one statement
 * and a job queued for each new warning or due moment. Costs nothing for a thread without a
 * clock unless the event may start one (opened, matched), and then only when the workspace
 * has an enabled policy.
 */

/**
 * `opened`: created or reopened (a new opening); `matched`: its priority, team or labels
 * changed; `replied`: a user or API key replied; `contact`: the contact wrote; `resolved`.
 */
export type SlaEvent = 'opened' | 'matched' | 'replied' | 'contact' | 'resolved';

export interface SlaThread extends MatchedThread {
  id: number;
  workspace_id: number;
  status: string;
  sla: unknown;
}

/**
 * The clock of a thread that had none when a policy comes to apply within its opening: due
 * from the opening (docs/sla.md), none on a resolved thread.
 */
async function clockFromOpening(trx: Executor, thread: SlaThread, policy: PolicyTargets, hours: BusinessHoursValue | null, now: Date) {
  if (thread.status === 'resolved') return null;
  const opening = await currentOpening(trx, thread.id);
  // No opening recorded for it: the clock starts now.
  return opening ? lateSla(policy, hours, opening.openedAt, opening) : openSla(policy, hours, now);
}

/** The business hours a thread's clocks follow: its team's own, else the workspace's. */
export function hoursOf(thread: { team_id: number | null }, workspace: BusinessHoursValue | null, teams: Map<number, BusinessHoursValue>) {
  return (thread.team_id !== null ? teams.get(thread.team_id) : undefined) ?? workspace;
}

/** The hours of a workspace and of these teams, as the clocks read them. */
export async function loadHours(db: Executor, workspaceId: number, teamIds: (number | null)[]) {
  const { businessHours } = await workspaceSettings(db, workspaceId);
  const teams = await teamHours(
    db,
    [...new Set(teamIds)].filter((t): t is number => t !== null),
  );
  return { workspace: businessHours as BusinessHoursValue | null, teams };
}

/** Moves the clocks of `items` (threads of one workspace); answers the columns of those that changed. */
export async function moveSla(
  deps: { boss: PgBoss },
  trx: Executor,
  workspaceId: number,
  items: { thread: SlaThread; event: SlaEvent }[],
  now: Date,
): Promise<Map<number, SlaColumns>> {
  const changed = new Map<number, SlaColumns>();
  const live = items.filter(({ thread, event }) => thread.sla !== null || event === 'opened' || event === 'matched');
  if (live.length === 0) return changed;
  const policies = live.some(({ event }) => event === 'opened' || event === 'matched') ? await listPolicies(trx, workspaceId, true) : [];
  if (policies.length === 0 && live.every(({ thread }) => thread.sla === null)) return changed;
  const hours = await loadHours(
    trx,
    workspaceId,
    live.map(({ thread }) => thread.team_id),
  );
  const jobs: Parameters<typeof enqueueSlaClocks>[2] = [];
  for (const { thread, event } of live) {
    const before = thread.sla as SlaState | null;
    const h = hoursOf(thread, hours.workspace, hours.teams);
    let after: SlaState | null = before;
    if (event === 'opened') {
      const policy = matchPolicy(policies, thread);
      after = policy ? openSla(policy, h, now) : null;
    } else if (event === 'matched') {
      // A resolved thread's clock is the record of its last opening (its breaches stay shown,
      // `?slaStatus=` finds it): a label or priority given at wrap-up changes nothing until
      // the thread is reopened.
      if (thread.status === 'resolved') continue;
      const policy = matchPolicy(policies, thread);
      if (!policy) after = null;
      else if (!before) after = await clockFromOpening(trx, thread, policy, h, now);
      else if (before.policyId !== policy.id) {
        // A target the old policy did not time: its first response may have been given
        // already, or the contact may be waiting for a next one.
        const untimed = (target: SlaTarget) => !before.clocks[target] && policy.targetMs[target] !== undefined && !before.resolvedAt;
        const read = untimed('firstResponse') || (untimed('nextResponse') && !before.replied);
        after = changePolicy(before, policy, h, read ? await currentOpening(trx, thread.id) : undefined);
      }
    } else if (before) {
      after = event === 'replied' ? replied(before, now) : event === 'contact' ? contactWrote(before, h, now) : resolved(before, now);
    }
    if (JSON.stringify(after) === JSON.stringify(before)) continue;
    const columns: SlaColumns = { sla: after, sla_due_at: nearestDue(after), sla_status: after ? statusOf(after) : null };
    changed.set(thread.id, columns);
    for (const w of wakeUps(before, after)) jobs.push({ threadId: thread.id, ...w });
  }
  await writeSla(
    trx,
    [...changed].map(([id, c]) => ({ id, ...c })),
  );
  await enqueueSlaClocks(deps.boss, trx, jobs);
  return changed;
}

/**
 * A reply of a user or an API key on a thread whose clock runs (`sla` as the caller read it):
 * first and next response are met. Whether anything changed (the caller then tells the thread).
 */
export async function slaReplied(deps: { boss: PgBoss }, trx: Executor, thread: { id: number; sla: unknown }, now: Date) {
  if (thread.sla === null) return false;
  const locked = await lockSlaThread(trx, thread.id);
  if (!locked) return false;
  const changed = await moveSla(deps, trx, locked.workspace_id, [{ thread: locked, event: 'replied' }], now);
  return changed.size > 0;
}
