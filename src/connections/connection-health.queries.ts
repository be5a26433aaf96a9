import { sql } from 'kysely';
import { arrayLiteral } from '../db/array-literal.js';
import { type Executor, PREPARED } from '../db/database.js';
import { truncate } from '../text/truncate.js';

/** The longest `lastError` a connection keeps. */
export const CONNECTION_ERROR_MAX_LENGTH = 1000;

/** What one batch tells of one connection's health, by its account. */
export interface AccountHealth {
  integrationKey: string;
  account: string;
  /** A delivery for it was applied. */
  delivered: boolean;
  /** The last delivery for it that failed, in words; null when none did. */
  error: string | null;
}

/**
 * Records a batch's health on its connections: one statement per batch, whatever its number of
 * messages. A connection row another batch is writing right now is skipped rather than waited
 * for (that batch records nearly the same moment), so deliveries never queue on a health write;
 * NO KEY UPDATE leaves the key-share locks of the batch's own thread and message inserts free.
 */
export async function recordAccountHealth(db: Executor, rows: AccountHealth[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  await sql`${PREPARED}
    WITH v AS (
      SELECT * FROM unnest(${arrayLiteral(rows.map((r) => r.integrationKey))}::text[], ${arrayLiteral(rows.map((r) => r.account))}::text[],
        ${arrayLiteral(rows.map((r) => r.delivered))}::bool[], ${arrayLiteral(rows.map((r) => (r.error === null ? null : truncate(r.error, CONNECTION_ERROR_MAX_LENGTH))))}::text[])
        AS v(integration_key, account, delivered, error)
    ), free AS (
      SELECT c.id, v.delivered, v.error FROM connections c
      JOIN v ON c.integration_key = v.integration_key AND c.external_account_id = v.account
      WHERE c.deleted_at IS NULL
      FOR NO KEY UPDATE OF c SKIP LOCKED
    )
    UPDATE connections c
    SET last_delivery_at = CASE WHEN f.delivered THEN ${at}::timestamptz ELSE c.last_delivery_at END,
        last_error_at = CASE WHEN f.error IS NULL THEN c.last_error_at ELSE ${at}::timestamptz END,
        last_error = COALESCE(f.error, c.last_error)
    FROM free f WHERE c.id = f.id`.execute(db);
}

/** Records sends that failed for good on their connections (one statement per batch of sends). */
export async function recordSendErrors(db: Executor, given: { connectionId: number; error: string }[], at: Date): Promise<void> {
  if (given.length === 0) return;
  const rows = [...new Map(given.map((r) => [r.connectionId, r])).values()]; // the last error of each
  await sql`
    WITH v AS (
      SELECT * FROM unnest(${rows.map((r) => r.connectionId)}::bigint[], ${rows.map((r) => truncate(r.error, CONNECTION_ERROR_MAX_LENGTH))}::text[])
        AS v(id, error)
    ), free AS (
      SELECT c.id, v.error FROM connections c JOIN v ON v.id = c.id
      FOR NO KEY UPDATE OF c SKIP LOCKED
    )
    UPDATE connections c SET last_error_at = ${at}::timestamptz, last_error = f.error
    FROM free f WHERE c.id = f.id`.execute(db);
}
