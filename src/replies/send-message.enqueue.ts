import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';

/** The queue of replies to send: one job per reply and attempt. */
export const SEND_QUEUE = 'send-message';

export interface SendJob {
  messageId: number;
  /** 1 for the first try; each retry of a retryable outcome adds one. */
  attempt: number;
}

/** The one way a reply is queued: by the route (with its message row) and for a retry. */
export async function enqueueSend(boss: PgBoss, trx: Executor, job: SendJob, startAfter?: Date): Promise<void> {
  await boss.send(SEND_QUEUE, job, { db: jobsIn(trx), ...(startAfter ? { startAfter } : {}) });
}
