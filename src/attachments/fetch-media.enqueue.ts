import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';

export const FETCH_MEDIA_QUEUE = 'fetch-media';

export interface FetchMediaJob {
  attachmentId: number;
  /** 1 for the first download; each retry adds one. */
  attempt: number;
}

/**
 * The one way a download is queued: with the message that carries the attachment (in the
 * ingest transaction, so a job exists exactly when its row does) and for each retry.
 */
export async function enqueueFetchMedia(
  boss: PgBoss,
  trx: Executor,
  jobs: FetchMediaJob[],
  options: { startAfter?: Date } = {},
): Promise<void> {
  if (jobs.length === 0) return;
  await boss.insert(
    FETCH_MEDIA_QUEUE,
    jobs.map((data) => ({ data, ...(options.startAfter ? { startAfter: options.startAfter } : {}) })),
    { db: jobsIn(trx) },
  );
}
