import type { Deps } from '../deps.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { insertNotifications } from '../notifications/notifications.queries.js';
import { findThreadViews } from '../threads/threads.queries.js';
import { lockSlaThread, teamMemberIds, writeSla } from './sla.queries.js';
import { SLA_CLOCK_QUEUE, type SlaClockJob } from './sla-clock.enqueue.js';
import { fire, nearestDue, type SlaState, statusOf } from './sla-state.js';

/**
 * Tells one SLA moment, once: the thread's clock records it (so a duplicate or retried job
 * tells nothing more), its status follows, and `sla.warning` or `sla.breached` goes to sockets
 * and endpoints with the thread, and a notification to its assignee (or, unassigned, to the
 * members of its team) — all in one transaction. A moment that moved or was met is nothing.
 * A clock's warning and breach are told once per opening: when another policy moved a due
 * time already told, the moment is only recorded (a changed status goes out as `thread.updated`).
 * A thread of a deleted connection is told nothing more.
 */
export async function tellSlaMoment(deps: Deps, job: SlaClockJob): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const thread = await lockSlaThread(trx, job.threadId);
    // A deleted connection's threads are read-only: nobody can answer them, so nothing is due.
    if (!thread?.sla || thread.connection_deleted) return false;
    const now = deps.now();
    const before = thread.sla as SlaState;
    const fired = fire(before, job.target, job.kind, job.at, now);
    if (!fired) return false;
    const next = fired.state;
    await writeSla(trx, [{ id: thread.id, sla: next, sla_due_at: nearestDue(next), sla_status: statusOf(next) }]);
    const [view] = await findThreadViews(trx, [thread.id]);
    if (!fired.announce) {
      if (statusOf(next) !== statusOf(before)) await announce(deps, trx, [{ type: 'thread.updated', thread: view! }], now);
      return true;
    }
    const userIds =
      thread.assignee_id !== null ? [thread.assignee_id] : thread.team_id !== null ? await teamMemberIds(trx, thread.team_id) : [];
    const notifications = await insertNotifications(
      trx,
      userIds.map((userId) => ({
        workspaceId: thread.workspace_id,
        userId,
        type: job.kind === 'warning' ? ('sla_warning' as const) : ('sla_breached' as const),
        threadId: thread.id,
        messageId: null,
        actorId: null,
      })),
      now,
    );
    const changes: Change[] = [
      { type: job.kind === 'warning' ? 'sla.warning' : 'sla.breached', thread: view! },
      ...notifications.map((notification) => ({ type: 'notification.created' as const, notification })),
    ];
    await announce(deps, trx, changes, now);
    return true;
  });
}

/**
 * `sla-clock`: one job per warning or due moment, starting at it (docs/sla.md). pg-boss wakes
 * it within its polling interval, so a moment is told within a second or two of its time,
 * and idle costs one indexed fetch per interval however many clocks run.
 */
export const slaClockQueue: QueueDefinition<SlaClockJob> = {
  name: SLA_CLOCK_QUEUE,
  options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 120, deleteAfterSeconds: 24 * 3600 },
  worker: {
    options: { batchSize: 50, pollingIntervalSeconds: 1 },
    async handle(deps, jobs) {
      for (const job of jobs) await tellSlaMoment(deps, job.data);
    },
  },
};
