import type { Config } from '../config.js';
import type { Executor } from '../db/database.js';
import { deleteInboxBatch } from './maintenance.queries.js';

const DAY_MS = 24 * 3600 * 1000;

export interface RetentionLimits {
  /** Rows per DELETE: each statement holds its row locks only briefly. */
  batchSize: number;
  /** Batches per status per run: one run never holds the database for long. */
  maxBatches: number;
}

/**
 * ≤ 100,000 rows of each status per run; runs are ten minutes apart, so a deployment that
 * processes up to ~160 deliveries a second on average keeps up, and a backlog (the first run
 * after enabling retention) drains over several runs.
 */
export const RETENTION_LIMITS: RetentionLimits = { batchSize: 1000, maxBatches: 100 };

export interface InboxPruned {
  processed: number;
  deadLetter: number;
  /** A status hit maxBatches: more old rows are left for the next run. */
  more: boolean;
}

/**
 * Deletes processed inbox rows older than `retentionDays` and dead letters older than
 * `deadLetterRetentionDays` (DESIGN "Retention"), in batches, each its own statement (pass the
 * pool, not a transaction). `received` and `failed` rows are never deleted: they are work
 * still to do.
 */
export async function pruneInbox(
  db: Executor,
  now: Date,
  config: Pick<Config, 'retentionDays' | 'deadLetterRetentionDays'>,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<InboxPruned> {
  const drain = async (status: 'processed' | 'dead_letter', days: number) => {
    const before = new Date(now.getTime() - days * DAY_MS);
    let deleted = 0;
    for (let batch = 0; batch < limits.maxBatches; batch++) {
      const n = await deleteInboxBatch(db, status, before, limits.batchSize);
      deleted += n;
      if (n < limits.batchSize) return { deleted, more: false };
    }
    return { deleted, more: true };
  };
  const processed = await drain('processed', config.retentionDays);
  const deadLetter = await drain('dead_letter', config.deadLetterRetentionDays);
  return { processed: processed.deleted, deadLetter: deadLetter.deleted, more: processed.more || deadLetter.more };
}
