import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';
import { currentTraceparent } from '../tracing/tracing.js';

/** The queue of replies to send: one job per reply and attempt. */
export const SEND_QUEUE = 'send-message';

export interface SendJob {
  messageId: number;
  /** 1 for the first try; each retry of a retryable outcome adds one. */
  attempt: number;
  /**
   * With tracing on, the W3C traceparent of the work that queued the reply (the request, or
   * the processing of the delivery an away reply answers); its retries keep it.
   */
  traceparent?: string;
}

/** The one way a reply is queued: by the route (with its message row) and for a retry. */
export async function enqueueSend(boss: PgBoss, trx: Executor, job: SendJob, startAfter?: Date): Promise<void> {
  const traceparent = job.traceparent ?? currentTraceparent();
  const data = traceparent === undefined ? job : { ...job, traceparent };
  await boss.send(SEND_QUEUE, data, { db: jobsIn(trx), ...(startAfter ? { startAfter } : {}) });
}
