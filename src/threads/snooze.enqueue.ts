import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';

/** The queue that ends snoozes: one job per snooze, plus the sweep's. */
export const SNOOZE_QUEUE = 'thread-snooze';

/** Ends the snooze of `threadId`; without one (the sweep), every snooze that is due. */
export interface SnoozeJob {
  threadId?: number;
}

/** The one way a snooze's end is queued: a job that starts when the snooze ends. */
export async function enqueueSnoozeWake(boss: PgBoss, trx: Executor, job: SnoozeJob, startAfter: Date): Promise<void> {
  await boss.send(SNOOZE_QUEUE, job, { db: jobsIn(trx), startAfter });
}
