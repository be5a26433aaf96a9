import { type Selectable, sql } from 'kysely';
import type pg from 'pg';
import type { VerificationKind } from '../channels/channel.js';
import type { Executor } from '../db/database.js';
import { offsetPage } from '../db/pages.js';
import type { InboxStatus, WebhookInboxTable } from '../db/types.js';
import type { OffsetRequest } from '../http/pagination.js';
import { truncate } from '../text/truncate.js';

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

const COLUMNS = 'id, integration_key, event, raw_body, verification, verified_account';
const statements = new Map<string, { name: string; text: string }>();

/**
 * `INSERT … VALUES ($1..$6), ($7..$12), …` for `n` rows, built once per size and shape; with
 * `raw_bytes` and `payload_json` as further columns only for a batch that carries some, so that
 * JSON deliveries (nearly all) bind exactly what they bound before.
 */
function insertStatement(n: number, withBytes: boolean, withPayload: boolean): { name: string; text: string } {
  const name = `inbox_insert_${withBytes ? 'bytes_' : ''}${withPayload ? 'payload_' : ''}${n}`;
  let statement = statements.get(name);
  if (!statement) {
    const width = 6 + (withBytes ? 1 : 0) + (withPayload ? 1 : 0);
    const tuples = Array.from({ length: n }, (_, i) => {
      const p = i * width;
      const bytes = withBytes ? `, $${p + 7}::bytea` : '';
      const payload = withPayload ? `, $${p + width}::jsonb` : '';
      return `($${p + 1}::uuid, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6}${bytes}${payload})`;
    });
    const extra = `${withBytes ? ', raw_bytes' : ''}${withPayload ? ', payload_json' : ''}`;
    const text = `INSERT INTO webhook_inbox (${COLUMNS}${extra}) VALUES ${tuples.join(', ')}`;
    statement = { name, text };
    statements.set(name, statement);
  }
  return statement;
}

/**
 * One multi-row INSERT for a batch of accepted deliveries, on a raw client inside the
 * caller's transaction. This is the ingestion hot path: the statement text is built once per
 * batch size (and shape) and prepared once per connection, so a batch costs one Bind and Execute.
 */
export async function insertInboxRows(client: pg.ClientBase, rows: NewInboxRow[]): Promise<void> {
  const withBytes = rows.some((r) => r.rawBytes);
  const withPayload = rows.some((r) => r.payloadJson !== undefined);
  const values: unknown[] = [];
  for (const r of rows) {
    values.push(r.id, r.integrationKey, r.event, r.rawBody, r.verification, r.verifiedAccount ?? null);
    if (withBytes) values.push(r.rawBytes ?? null);
    if (withPayload) values.push(r.payloadJson ?? null);
  }
  await client.query({ ...insertStatement(rows.length, withBytes, withPayload), values });
}

/**
 * `column` is one of `ids`, in a form that keeps the partitioned inbox's planning and start-up
 * to the batch's own days (src/db/partitions.ts; docs/performance.md, "The compare on the
 * partitioned inbox"). Without a bound on the id the planner keeps every day: an UPDATE …
 * FROM unnest then opens, locks and probes each day's partition for each row. Given the ids
 * as a constant array it prunes by each of them, a step per id (250 in a batch), which
 * doubled the planning of the batch's statements. So the ids go in as the value of a
 * subquery, which the planner does not look into (the index still probes exactly them), and
 * the batch's lowest and highest id, two constants, say which days it reaches. A UUID sorts
 * as its canonical lowercase text does.
 */
function idIn(column: string, ids: string[]) {
  const ref = sql.ref(column);
  let lo: string | undefined;
  let hi: string | undefined;
  for (const id of ids) {
    const v = id.toLowerCase();
    // Another spelling PostgreSQL reads as a UUID (braces, no hyphens) does not sort as it does.
    if (!CANONICAL_UUID.test(v)) return sql<boolean>`${ref} = ANY(${ids}::uuid[])`;
    if (lo === undefined || v < lo) lo = v;
    if (hi === undefined || v > hi) hi = v;
  }
  // One array parameter, not one per id: a batch names 250.
  return sql<boolean>`(${ref} = ANY((SELECT ${ids}::uuid[])::uuid[]) AND ${ref} BETWEEN ${lo ?? null}::uuid AND ${hi ?? null}::uuid)`;
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

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
    .where(idIn('id', ids))
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
    .where(idIn('id', ids))
    .where('status', 'in', ['received', 'failed'])
    .execute();
  return rows.map((r) => r.id);
}

/**
 * `appId` is the row's attribution as of this attempt and replaces whatever was stored: a row
 * once attributed to one app (under an older rule, or before another account in its body was
 * connected) must lose that attribution when it turns out to span several apps.
 */
export async function markProcessed(db: Executor, rows: { id: string; appId: string | null }[], at: Date): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    UPDATE webhook_inbox AS w
    SET status = 'processed', processed_at = ${at}, attempt_count = w.attempt_count + 1,
        last_error = NULL, next_retry_at = NULL, app_id = v.app_id, updated_at = ${at}
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.appId)}::text[]) AS v(id, app_id)
    WHERE w.id = v.id AND ${idIn(
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
    WHERE w.id = v.id AND ${idIn(
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
