import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { dropExpiredPartitions, listPartitions, preparePartitions, rowRetentionPartitions } from '../db/partitions.js';
import { deleteInboxBatch, deleteOutboundEventsBatch, inboxRowsToKeep, outboundRowsToKeep } from './maintenance.queries.js';

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
  /** Rows deleted one by one (in the DEFAULT and legacy partitions). */
  processed: number;
  deadLetter: number;
  /** A status hit maxBatches: more old rows are left for the next run. */
  more: boolean;
  /** Day partitions made ahead, and expired ones dropped whole (docs/operations.md, "Partitions"). */
  partitionsCreated: string[];
  partitionsDropped: string[];
  /** Rows of the dropped days that had to stay (work to do, young dead letters), now in the DEFAULT. */
  rowsKept: number;
  /** Expired days left for the next run (their lock was busy, or too many rows had to stay). */
  partitionsSkipped: string[];
}

/**
 * Inbox retention (docs/webhooks.md, "Retention"): processed rows older than `retentionDays`
 * and dead letters older than `deadLetterRetentionDays` go; `received` and `failed` rows never
 * do: they are work still to do. The inbox is partitioned by day: this makes the days ahead,
 * drops each day that lies wholly before `retentionDays` (moving the rows it must keep into
 * the DEFAULT partition), then deletes expired rows in batches from the partitions that are not
 * days (dead letters from the days too when their window is the shorter), each batch its own
 * statement (pass the pool, not a transaction).
 */
export async function pruneInbox(
  db: Db,
  now: Date,
  config: Pick<Config, 'retentionDays' | 'deadLetterRetentionDays'>,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<InboxPruned> {
  const processedBefore = daysBefore(now, config.retentionDays);
  const deadLetterBefore = daysBefore(now, config.deadLetterRetentionDays);
  const { created } = await preparePartitions(db, 'webhook_inbox', now);
  const dropped = await dropExpiredPartitions(db, 'webhook_inbox', processedBefore, inboxRowsToKeep(processedBefore, deadLetterBefore));
  let processed = 0;
  let deadLetter = 0;
  let more = false;
  const byRow = await rowRetentionPartitions(db, 'webhook_inbox');
  for (const partition of byRow) {
    const p = await drain((n) => deleteInboxBatch(db, partition, 'processed', processedBefore, n), limits);
    processed += p.deleted;
    more ||= p.more;
  }
  // A day goes whole only after INBOX_RETENTION_DAYS: a shorter dead-letter window reaches into
  // the days still kept too (each day's partial index on dead letters finds them). A longer one
  // never does: a row dies after it was made, so the kept days hold no old dead letter.
  const deadLetterPartitions =
    config.deadLetterRetentionDays < config.retentionDays ? (await listPartitions(db, 'webhook_inbox')).map((p) => p.name) : byRow;
  for (const partition of deadLetterPartitions) {
    const d = await drain((n) => deleteInboxBatch(db, partition, 'dead_letter', deadLetterBefore, n), limits);
    deadLetter += d.deleted;
    more ||= d.more;
  }
  return {
    processed,
    deadLetter,
    more,
    partitionsCreated: created,
    partitionsDropped: dropped.dropped,
    rowsKept: dropped.kept,
    partitionsSkipped: dropped.skipped,
  };
}

export interface OutboundPruned {
  /** Events deleted one by one (in the DEFAULT and legacy partitions), with their deliveries and attempts. */
  deleted: number;
  more: boolean;
  /** Day partitions of the three tables made ahead, and expired ones dropped whole. */
  partitionsCreated: string[];
  partitionsDropped: string[];
  /** Rows of the dropped days that had to stay (pending deliveries, their attempts and events), now in the DEFAULT. */
  rowsKept: number;
  partitionsSkipped: string[];
}

/**
 * Outbound retention (docs/outbound-webhooks.md): events older than `retentionDays` go with
 * their deliveries and every attempt, the delivery log's history; an event with a delivery
 * still pending stays. The three tables are partitioned by the event's day: this makes the
 * days ahead, drops each day wholly before `retentionDays` — its attempts, then its
 * deliveries, then its events, keeping the pending deliveries and what they need — then
 * deletes expired events in batches from the partitions that are not days.
 */
export async function pruneOutboundEvents(
  db: Db,
  now: Date,
  config: Pick<Config, 'retentionDays'>,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<OutboundPruned> {
  const before = daysBefore(now, config.retentionDays);
  const result: OutboundPruned = {
    deleted: 0,
    more: false,
    partitionsCreated: [],
    partitionsDropped: [],
    rowsKept: 0,
    partitionsSkipped: [],
  };
  for (const table of OUTBOUND_DROP_ORDER) result.partitionsCreated.push(...(await preparePartitions(db, table, now)).created);
  for (const table of OUTBOUND_DROP_ORDER) {
    const dropped = await dropExpiredPartitions(db, table, before, outboundRowsToKeep(table));
    result.partitionsDropped.push(...dropped.dropped);
    result.partitionsSkipped.push(...dropped.skipped);
    result.rowsKept += dropped.kept;
  }
  for (const partition of await rowRetentionPartitions(db, 'webhook_events')) {
    const d = await drain((n) => deleteOutboundEventsBatch(db, partition, before, n), limits);
    result.deleted += d.deleted;
    result.more ||= d.more;
  }
  return result;
}

/** A day's attempts are found through its deliveries, and its events through both. */
export const OUTBOUND_DROP_ORDER = ['webhook_attempts', 'webhook_deliveries', 'webhook_events'] as const;

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
