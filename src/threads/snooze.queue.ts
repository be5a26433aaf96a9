import type { Deps } from '../deps.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { SNOOZE_ENDED } from './activity.js';
import { routeWaiting } from './routing.js';
import { SNOOZE_QUEUE, type SnoozeJob } from './snooze.enqueue.js';
import { insertTranscriptLines, wakeSnoozed } from './thread-workflow.queries.js';
import { findThreadViews } from './threads.queries.js';

/** Every minute, a sweep ends any snooze whose own job was lost or ran early (clock skew). */
export const SNOOZE_SWEEP_CRON = '* * * * *';

/**
 * Opens the threads whose snooze has ended, writes "the snooze ended" into each transcript,
 * announces `thread.updated` and routes those that wait for an assignee, in one transaction.
 * A job whose thread was snoozed again until later, or opened by hand or by a new message,
 * changes nothing.
 */
export async function wakeThreads(deps: Deps, ids: number[] | null): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const woken = await wakeSnoozed(trx, ids, now);
    if (woken.length === 0) return 0;
    const activity = await insertTranscriptLines(
      trx,
      'activity',
      woken.map((t) => ({
        workspaceId: t.workspace_id,
        threadId: t.id,
        connectionId: t.connection_id,
        text: SNOOZE_ENDED,
        authorId: null,
      })),
      now,
    );
    const views = await findThreadViews(
      trx,
      woken.map((t) => t.id),
    );
    const changes: Change[] = [
      ...activity.map((message) => ({ type: 'message.created' as const, message })),
      ...views.map((thread) => ({ type: 'thread.updated' as const, thread })),
    ];
    await announce(deps, trx, changes, now);
    // A thread back to `open` without an assignee may wait in a routing team's queue: route
    // it now, as a reopened thread is (docs/teams.md). After the threads' own locks, as every
    // routing transaction takes them.
    for (const workspaceId of new Set(woken.map((t) => t.workspace_id))) await routeWaiting(deps, trx, workspaceId, now);
    return woken.length;
  });
}

/**
 * `thread-snooze`: one job per snooze, starting when it ends (docs/conversations.md), plus a
 * sweep every minute. Ending a snooze is idempotent, so a duplicate or late job is harmless.
 */
export const snoozeQueue: QueueDefinition<SnoozeJob> = {
  name: SNOOZE_QUEUE,
  options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 120, deleteAfterSeconds: 24 * 3600 },
  schedule: SNOOZE_SWEEP_CRON,
  worker: {
    options: { batchSize: 50, pollingIntervalSeconds: 1 },
    async handle(deps, jobs) {
      // A sweep's job carries its schedule's data: `{}` (jobs/registry.ts), but null in one
      // queued by a schedule made without data (0.2.0's, and this version's before the fix).
      const ids = jobs.map((j) => (j.data as SnoozeJob | null)?.threadId).filter((id): id is number => typeof id === 'number');
      if (ids.length > 0) await wakeThreads(deps, ids);
      if (ids.length < jobs.length) await wakeThreads(deps, null);
    },
  },
};
