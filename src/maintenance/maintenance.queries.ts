import { sql } from 'kysely';
import { uuid7Floor } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';
import { IDEMPOTENCY_KEY_LIFETIME } from '../idempotency/idempotency.queries.js';
import { deleteEvents } from '../webhooks-out/events.queries.js';

/** How long spent or expired credentials and bookkeeping rows are kept before deletion. */
export const RETENTION = {
  authCodesAfterExpiry: '1 hour',
  loginAttempts: '1 day',
  sessionsAfterEnd: '7 days',
  /** Long enough for a user to see in the list that a token expired. */
  personalAccessTokensAfterEnd: '30 days',
  idempotencyKeys: IDEMPOTENCY_KEY_LIFETIME,
  /** A live chat visitor's row (its token's hash, the address it started from) once the token ended. */
  livechatVisitorsAfterExpiry: '1 day',
  /** A receipt kept for a send not yet recorded (messaging/early-receipts.ts): sends settle within seconds. */
  earlyReceipts: '1 hour',
} as const;

export interface Pruned {
  authCodes: number;
  loginAttempts: number;
  sessions: number;
  personalAccessTokens: number;
  idempotencyKeys: number;
  livechatVisitors: number;
  earlyReceipts: number;
}

/** Deletes what no request can use any more; returns how many rows of each went. */
export async function pruneExpired(db: Executor, now: Date): Promise<Pruned> {
  const count = async (q: ReturnType<typeof sql>) => Number((await q.execute(db)).numAffectedRows ?? 0n);
  return {
    authCodes: await count(
      sql`DELETE FROM auth_codes WHERE expires_at < ${now}::timestamptz - ${RETENTION.authCodesAfterExpiry}::interval`,
    ),
    loginAttempts: await count(
      sql`DELETE FROM login_attempts WHERE created_at < ${now}::timestamptz - ${RETENTION.loginAttempts}::interval`,
    ),
    sessions: await count(sql`
      DELETE FROM sessions
      WHERE COALESCE(revoked_at, expires_at) < ${now}::timestamptz - ${RETENTION.sessionsAfterEnd}::interval`),
    personalAccessTokens: await count(sql`
      DELETE FROM personal_access_tokens
      WHERE COALESCE(revoked_at, expires_at) < ${now}::timestamptz - ${RETENTION.personalAccessTokensAfterEnd}::interval`),
    idempotencyKeys: await count(
      sql`DELETE FROM idempotency_keys WHERE created_at < ${now}::timestamptz - ${RETENTION.idempotencyKeys}::interval`,
    ),
    // The visitor's contact, thread and messages stay: they are the workspace's conversation.
    livechatVisitors: await count(
      sql`DELETE FROM livechat_visitors WHERE expires_at < ${now}::timestamptz - ${RETENTION.livechatVisitorsAfterExpiry}::interval`,
    ),
    // Receipts for messages never sent through the service (another tool on the same account).
    earlyReceipts: await count(
      sql`DELETE FROM early_receipts WHERE received_at < ${now}::timestamptz - ${RETENTION.earlyReceipts}::interval`,
    ),
  };
}

/** What makes an inbox row expired: retention may remove it, whether by row or by partition. */
function inboxExpired(status: 'processed' | 'dead_letter', before: Date) {
  const since = status === 'processed' ? sql.ref('processed_at') : sql.ref('updated_at');
  return sql<boolean>`(status = ${status} AND ${since} < ${before})`;
}

/** The rows of an expired inbox day that must outlive it: work still to do, and the young. */
export function inboxRowsToKeep(processedBefore: Date, deadLetterBefore: Date) {
  return sql<boolean>`NOT (${inboxExpired('processed', processedBefore)} OR ${inboxExpired('dead_letter', deadLetterBefore)})`;
}

/**
 * Deletes at most `limit` inbox rows of `partition` in `status` that became so before
 * `before`: `processed` rows by processed_at, `dead_letter` rows by updated_at (when they
 * died). Returns how many went. Only the partitions that are not whole days are pruned row by
 * row (src/db/partitions.ts): a day goes whole once it expired.
 *
 * Inbox ids are UUIDv7, and a row is created before it is processed or dead-lettered, so every
 * such row lies in `id < uuid7Floor(before)`: the primary key bounds the scan and no index on
 * processed_at is needed, which would cost every accepted and processed delivery an index
 * entry. (A row whose id came from a clock running ahead of the worker's by a few seconds goes
 * on a later run.) Rows being worked on are skipped, not waited for.
 */
export async function deleteInboxBatch(
  db: Executor,
  partition: string,
  status: 'processed' | 'dead_letter',
  before: Date,
  limit: number,
): Promise<number> {
  return deleteOldBatch(db, partition, before, inboxExpired(status, before), limit);
}

/**
 * The rows of an expired outbound day that must outlive it: deliveries still `pending` (work
 * to do, a redelivery), their attempts so far, and the events they send. Days go attempts
 * first, then deliveries, then events, each found through the tables still to go.
 */
export function outboundRowsToKeep(table: 'webhook_events' | 'webhook_deliveries' | 'webhook_attempts') {
  if (table === 'webhook_deliveries') return sql<boolean>`status = 'pending'`;
  if (table === 'webhook_attempts')
    return sql<boolean>`EXISTS (
      SELECT 1 FROM webhook_deliveries d WHERE d.id = expired.delivery_id AND d.event_id = expired.event_id AND d.status = 'pending')`;
  return sql<boolean>`EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = expired.id AND d.status = 'pending')`;
}

/**
 * Deletes at most `limit` outbound webhook events of `partition` (the DEFAULT or the legacy
 * one: days go whole) created before `before`, with their deliveries and attempts, skipping
 * an event that still has a pending delivery. Event ids are UUIDv7 like the inbox's, so the
 * primary key bounds the scan.
 */
export async function deleteOutboundEventsBatch(db: Executor, partition: string, before: Date, limit: number): Promise<number> {
  const below = uuid7Floor(before.getTime());
  return deleteEvents(
    db,
    sql`
      SELECT id FROM ${sql.table(partition)} AS old_rows
      WHERE id < ${below}::uuid AND created_at < ${before}
        AND NOT EXISTS (
          SELECT 1 FROM webhook_deliveries d WHERE d.event_id = old_rows.id AND d.event_id < ${below}::uuid AND d.status = 'pending')
      ORDER BY id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED`,
    { idsBelow: below },
  );
}

/**
 * One batch of a retention delete on a table keyed by UUIDv7: rows made before `before` (a
 * primary-key range) that match `where`, oldest first, skipping rows being worked on.
 */
async function deleteOldBatch(db: Executor, table: string, before: Date, where: ReturnType<typeof sql>, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM ${sql.table(table)} AS doomed
    USING (
      SELECT id FROM ${sql.table(table)} AS old_rows
      WHERE id < ${uuid7Floor(before.getTime())}::uuid AND ${where}
      ORDER BY id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) AS old
    WHERE doomed.id = old.id`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
