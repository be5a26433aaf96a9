import { type Selectable, sql } from 'kysely';
import type pg from 'pg';
import type { VerificationKind } from '../channels/channel.js';
import { type Executor, preparedName } from '../db/database.js';
import { withPackedTexts } from '../db/packed-texts.js';
import { offsetPage } from '../db/pages.js';
import { partitionKeyIn } from '../db/partitions.js';
import type { InboxStatus, WebhookInboxTable } from '../db/types.js';
import type { OffsetRequest } from '../http/pagination.js';
import { truncate } from '../text/truncate.js';
import type { JobStatement } from './inbox.enqueue.js';

/** A row as readers see it: everything but `raw_bytes`, which only the fetch-media job reads. */
export type InboxRow = Omit<Selectable<WebhookInboxTable>, 'raw_bytes'>;

export interface NewInboxRow {
  id: string;
  integrationKey: string;
  event: string | null;
  rawBody: string;
  /** The body's exact bytes, only when `rawBody` does not hold them (bytesToKeep in channels/channel.ts). */
  rawBytes?: Buffer | null;
  verification: VerificationKind;
  /** The account the verification itself established, when it did (a Telegram secret names its bot). */
  verifiedAccount?: string | null;
  /**
   * Its parse, as JSON, when the one who stored it already parsed it (a mailbox reader parses
   * each mail as it reads it): written with the row, not by a second UPDATE of it.
   */
  payloadJson?: string;
  /** The traceparent of the request that brought it (tracing on): queued with its job, not stored. */
  traceparent?: string | undefined;
}

const storeStatements = new Map<string, { name: string; text: string }>();

/**
 * Stores a batch of accepted deliveries and queues their job (`job`, pg-boss's own insert from
 * deliveriesJobStatement) as ONE statement: the rows' INSERT runs as a data-modifying `WITH`
 * of the job's. The ingestion hot path: one statement is its own transaction, so a group
 * commit is one round trip where BEGIN, the two inserts and COMMIT were four, and the rows and
 * the job still commit together or not at all.
 *
 * The rows go in as one JSON array (json_to_recordset), so the text is the same for every
 * batch: prepared once per connection and, after its first executions, run on a cached
 * generic plan. A VALUES list per size would be a statement per size, planned afresh on most
 * of its calls, and planning pg-boss's part costs more than executing the whole; arrays per
 * column would be escaped element by element in JavaScript, several times the cost of one
 * JSON.stringify (docs/performance.md, "One statement per group commit"). The bodies, nearly
 * all of a row, are not in that JSON: escaping 1.5 KB of JSON text into a JSON string was most
 * of the statement's JavaScript, so they are packed (withPackedTexts) and each row names its
 * slice (docs/performance.md, "Acknowledging, per request"). pg-boss's statement numbers its
 * values from $1; the rows follow them.
 */
export async function storeDeliveries(db: pg.Pool | pg.ClientBase, rows: NewInboxRow[], job: JobStatement): Promise<void> {
  const param = job.values.length + 1;
  const key = `${param}:${job.text}`;
  let statement = storeStatements.get(key);
  if (!statement) {
    const insert = `INSERT INTO webhook_inbox (id, integration_key, event, raw_body, verification, verified_account, raw_bytes, payload_json)
      SELECT id, integration_key, event, convert_from(substring($${param + 1}::bytea FROM body_at FOR body_length), 'UTF8'),
        verification, verified_account, raw_bytes, payload_json::jsonb
      FROM json_to_recordset($${param}::json) AS r(id uuid, integration_key text, event text, body_at int, body_length int,
        verification text, verified_account text, raw_bytes bytea, payload_json text)`;
    const jobText = job.text.trimStart();
    // pg-boss's insert is a plain INSERT, or (with its NOTIFY on) a WITH whose list the rows' join.
    const text = /^with\s/i.test(jobText)
      ? `WITH inbox_rows AS (${insert}), ${jobText.slice(4)}`
      : `WITH inbox_rows AS (${insert}) ${jobText}`;
    statement = { name: preparedName(text), text };
    storeStatements.set(key, statement);
  }
  await withPackedTexts(
    rows.map((r) => r.rawBody),
    async ({ bytes, starts, lengths }) => {
      const records = rows.map((r, i) => ({
        id: r.id,
        integration_key: r.integrationKey,
        event: r.event,
        body_at: starts[i],
        body_length: lengths[i],
        verification: r.verification,
        verified_account: r.verifiedAccount ?? null,
        // Absent keys read as NULL: JSON deliveries carry neither.
        raw_bytes: r.rawBytes ? `\\x${r.rawBytes.toString('hex')}` : undefined,
        payload_json: r.payloadJson,
      }));
      // A Buffer goes to Postgres as a binary value: the bytes as they are, no escaping.
      await db.query({ ...statement, values: [...job.values, JSON.stringify(records), bytes] });
    },
  );
}

/**
 * Locks the rows of `ids` that still need work. A row another worker is processing is
 * skipped (SKIP LOCKED), and so are processed and dead-lettered rows: a duplicate job is a no-op.
 * Which of the skipped rows were only locked, findStillPending tells.
 */
export async function lockPendingRows(db: Executor, ids: string[]): Promise<InboxRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom('webhook_inbox')
    .select(ROW_COLUMNS)
    .where(partitionKeyIn('id', ids))
    .where('status', 'in', ['received', 'failed'])
    .orderBy('created_at')
    .forUpdate()
    .skipLocked()
    .execute();
}

/**
 * Of `ids`, the rows that still need work as last committed, read without waiting for locks:
 * after lockPendingRows skipped them, these are the ones another transaction holds right now.
 */
export async function findStillPending(db: Executor, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('webhook_inbox')
    .select('id')
    .where(partitionKeyIn('id', ids))
    .where('status', 'in', ['received', 'failed'])
    .execute();
  return rows.map((r) => r.id);
}

export interface ProcessedUpdate {
  id: string;
  appId: string | null;
  /** What the delivery dropped (events naming another account), kept as its `lastError`; else cleared. */
  note?: string | null;
}

/**
 * `appId` is the row's attribution as of this attempt and replaces whatever was stored: a row
 * once attributed to one app (under an older rule, or before another account in its body was
 * connected) must lose that attribution when it turns out to span several apps.
 */
export async function markProcessed(db: Executor, rows: ProcessedUpdate[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE webhook_inbox AS w
    SET status = 'processed', processed_at = ${at}, attempt_count = w.attempt_count + 1,
        last_error = v.last_error, next_retry_at = NULL, app_id = v.app_id, updated_at = ${at}
    FROM unnest(
      ${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.appId)}::text[],
      ${rows.map((r) => (r.note ? truncate(r.note, LAST_ERROR_MAX_LENGTH) : null))}::text[]
    ) AS v(id, app_id, last_error)
    WHERE w.id = v.id AND ${partitionKeyIn(
      'w.id',
      rows.map((r) => r.id),
    )}`.execute(db);
}

export interface FailedUpdate {
  id: string;
  /** The row's attribution, stored as given (see markProcessed); pass the row's own when unknown. */
  appId: string | null;
  status: 'failed' | 'dead_letter';
  attemptCount: number;
  nextRetryAt: Date | null;
  lastError: string;
}

/** The longest `lastError` kept; every failure path writes through markFailed, which cuts it. */
export const LAST_ERROR_MAX_LENGTH = 2000;

export async function markFailed(db: Executor, rows: FailedUpdate[], at: Date): Promise<DeadLettered[]> {
  if (rows.length === 0) return [];
  const { rows: dead } = await sql<DeadLettered>`
    UPDATE webhook_inbox AS w
    SET status = v.status, attempt_count = v.attempt_count, next_retry_at = v.next_retry_at,
        last_error = v.last_error, app_id = v.app_id, processed_at = NULL, updated_at = ${at}
    FROM unnest(
      ${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.status)}::text[], ${rows.map((r) => r.attemptCount)}::int[],
      ${rows.map((r) => r.nextRetryAt)}::timestamptz[], ${rows.map((r) => truncate(r.lastError, LAST_ERROR_MAX_LENGTH))}::text[], ${rows.map((r) => r.appId)}::text[]
    ) AS v(id, status, attempt_count, next_retry_at, last_error, app_id)
    LEFT JOIN workspaces ws ON ws.app_id = v.app_id
    WHERE w.id = v.id AND ${partitionKeyIn(
      'w.id',
      rows.map((r) => r.id),
    )}
    RETURNING ${sql.join(SUMMARY_COLUMNS.map((c) => sql.ref(`w.${c}`)))}, ws.id AS workspace_id`.execute(db);
  return dead.filter((r) => r.status === 'dead_letter');
}

/** A row that has just been dead-lettered, without its body, and its app's workspace (null: none). */
export type DeadLettered = InboxSummaryRow & { workspace_id: number | null };

/** One row with its body: of `appId` only, or any row when `appId` is null (the operator). */
export async function findInboxRow(db: Executor, id: string, appId: string | null) {
  let q = db.selectFrom('webhook_inbox').select(ROW_COLUMNS).where('id', '=', id);
  if (appId !== null) q = q.where('app_id', '=', appId);
  return q.executeTakeFirst();
}

/**
 * What lists select: every column but the body. Lists never show bodies (a row may hold
 * customer content of several tenants), and not reading them keeps a page of large
 * deliveries cheap: no TOASTed text fetched, no JSON parsed.
 */
const SUMMARY_COLUMNS = [
  'id',
  'integration_key',
  'app_id',
  'event',
  'status',
  'attempt_count',
  'next_retry_at',
  'last_error',
  'processed_at',
  'created_at',
  'updated_at',
  'verification',
] as const;
export type InboxSummaryRow = Omit<InboxRow, 'raw_body' | 'payload_json' | 'verified_account'>;
/**
 * What a row read with its body selects: not `raw_bytes`, a second copy of a binary body that
 * only the fetch-media job reads (the worker parses the text, the operator is shown the text).
 */
const ROW_COLUMNS = [...SUMMARY_COLUMNS, 'raw_body', 'payload_json', 'verified_account'] as const;

/** The caller's rows in one state, newest first (docs/webhooks.md, "Dead-letter routes"). */
export async function listAppInbox(db: Executor, appId: string, status: InboxStatus, limit: number) {
  return db
    .selectFrom('webhook_inbox')
    .select(SUMMARY_COLUMNS)
    .where('app_id', '=', appId)
    .where('status', '=', status)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Every app's rows, unresolved ones included, for the operator: offset page plus total. */
export async function listAllInbox(
  db: Executor,
  filter: { status?: InboxStatus; integrationKey?: string; appId?: string },
  page: OffsetRequest,
) {
  let q = db.selectFrom('webhook_inbox');
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.integrationKey) q = q.where('integration_key', '=', filter.integrationKey);
  if (filter.appId) q = q.where('app_id', '=', filter.appId);
  return offsetPage(q, page, (b) => b.select(SUMMARY_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc'));
}

/**
 * Locks a row for a requeue: the row of `appId` only, or any row when `appId` is null (the
 * operator). Another app's row is not found.
 */
export async function lockRowForRequeue(db: Executor, id: string, appId: string | null) {
  let q = db.selectFrom('webhook_inbox').select(['id', 'status']).where('id', '=', id);
  if (appId !== null) q = q.where('app_id', '=', appId);
  return q.forUpdate().executeTakeFirst();
}

export async function resetForRequeue(db: Executor, id: string, at: Date): Promise<void> {
  await db
    .updateTable('webhook_inbox')
    .set({ status: 'received', attempt_count: 0, last_error: null, processed_at: null, next_retry_at: null, updated_at: at })
    .where('id', '=', id)
    .execute();
}

export async function countDeadLetters(db: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox WHERE status = 'dead_letter'`.execute(db);
  return rows[0]!.n;
}
