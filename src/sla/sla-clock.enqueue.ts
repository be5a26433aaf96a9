import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { jobsIn } from '../jobs/queue.js';
import type { SlaEventKind, SlaTarget } from './sla-state.js';

/** The queue that tells SLA warnings and breaches: one job per moment, starting then. */
export const SLA_CLOCK_QUEUE = 'sla-clock';

/** The warning or breach of `target` of a thread, due at `at` (an ISO instant the state holds). */
export interface SlaClockJob {
  threadId: number;
  target: SlaTarget;
  kind: SlaEventKind;
  at: string;
}

/**
 * The one way an SLA moment is queued: each job starts at its moment, so nothing ever scans
 * the threads for what is due. A job whose moment moved or was met finds nothing to tell.
 */
export async function enqueueSlaClocks(boss: PgBoss, trx: Executor, jobs: SlaClockJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await boss.insert(
    SLA_CLOCK_QUEUE,
    jobs.map((data) => ({ data, startAfter: new Date(data.at) })),
    { db: jobsIn(trx) },
  );
}
