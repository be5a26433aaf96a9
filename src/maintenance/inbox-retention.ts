import type { Config } from '../config.js';
import type { Executor } from '../db/database.js';
import { deleteInboxBatch, deleteOutboundEventsBatch } from './maintenance.queries.js';

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
 * `deadLetterRetentionDays` (docs/webhooks.md, "Retention"), in batches, each its own statement (pass the
 * pool, not a transaction). `received` and `failed` rows are never deleted: they are work
 * still to do.
 */
export async function pruneInbox(
  db: Executor,
  now: Date,
  config: Pick<Config, 'retentionDays' | 'deadLetterRetentionDays'>,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<InboxPruned> {
  const processed = await drain((n) => deleteInboxBatch(db, 'processed', daysBefore(now, config.retentionDays), n), limits);
  const deadLetter = await drain((n) => deleteInboxBatch(db, 'dead_letter', daysBefore(now, config.deadLetterRetentionDays), n), limits);
  return { processed: processed.deleted, deadLetter: deadLetter.deleted, more: processed.more || deadLetter.more };
}

/**
 * Deletes outbound webhook events older than `retentionDays` with their deliveries and every
 * attempt (docs/webhooks.md, "Retention"), the delivery log's history; an event with a delivery still
 * pending stays.
 */
export async function pruneOutboundEvents(
  db: Executor,
  now: Date,
  config: Pick<Config, 'retentionDays'>,
  limits: RetentionLimits = RETENTION_LIMITS,
) {
  return drain((n) => deleteOutboundEventsBatch(db, daysBefore(now, config.retentionDays), n), limits);
}

const daysBefore = (now: Date, days: number) => new Date(now.getTime() - days * DAY_MS);

/** Deletes batch after batch until one comes back short or maxBatches ran. */
async function drain(deleteBatch: (limit: number) => Promise<number>, limits: RetentionLimits) {
  let deleted = 0;
  for (let batch = 0; batch < limits.maxBatches; batch++) {
    const n = await deleteBatch(limits.batchSize);
    deleted += n;
    if (n < limits.batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
