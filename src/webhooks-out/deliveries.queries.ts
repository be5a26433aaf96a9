import { type Selectable, sql } from 'kysely';
import { uuid7Floor } from '../crypto/uuid7.js';
import { arrayLiteral } from '../db/array-literal.js';
import { type Executor, PREPARED } from '../db/database.js';
import { packedParams, unpacked, withPackedTexts } from '../db/packed-texts.js';
import { keysetPage, type SortKey } from '../db/pages.js';
import { partitionKeyIn } from '../db/partitions.js';
import type { OutboundDeliveryStatus, WebhookAttemptsTable } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';

export interface NewEvent {
  id: string;
  workspaceId: number;
  type: string;
  body: string;
}

/**
 * Inserts events in the order given: their `seq` follows it, and so does the event log. The
 * bodies, nearly all of a row, are packed into one binary parameter (withPackedTexts), as the
 * api stores delivery bodies.
 */
export async function insertEvents(db: Executor, events: NewEvent[], at: Date): Promise<void> {
  if (events.length === 0) return;
  await withPackedTexts(
    events.map((e) => e.body),
    (packed) => {
      const { bytes, starts, lengths } = packedParams(packed);
      return sql`${PREPARED}
        INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
        SELECT i, w, t, ${unpacked(bytes, 's', 'l')}, ${at}::timestamptz
        FROM unnest(${arrayLiteral(events.map((e) => e.id))}::uuid[], ${arrayLiteral(events.map((e) => e.workspaceId))}::int[],
                    ${arrayLiteral(events.map((e) => e.type))}::text[], ${starts}, ${lengths}) WITH ORDINALITY AS v(i, w, t, s, l, n)
        ORDER BY n`.execute(db);
    },
  );
}

/** One pending delivery per (event, endpoint), each with the id of the job that makes its first attempt. */
export async function insertDeliveries(db: Executor, rows: { endpointId: number; eventId: string; jobId: string }[], at: Date) {
  if (rows.length === 0) return [];
  const { rows: inserted } = await sql<{ id: number; endpoint_id: number; event_id: string; job_id: string }>`
    INSERT INTO webhook_deliveries (endpoint_id, event_id, job_id, next_attempt_at, created_at, updated_at)
    SELECT e, ev, j, ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
    FROM unnest(${arrayLiteral(rows.map((r) => r.endpointId))}::bigint[], ${arrayLiteral(rows.map((r) => r.eventId))}::uuid[], ${arrayLiteral(rows.map((r) => r.jobId))}::uuid[]) AS v(e, ev, j)
    RETURNING id, endpoint_id, event_id, job_id`.execute(db);
  return inserted;
}

const DELIVERY_COLUMNS = [
  'webhook_deliveries.id',
  'webhook_deliveries.endpoint_id',
  'webhook_deliveries.event_id',
  'webhook_deliveries.status',
  'webhook_deliveries.attempt_count',
  'webhook_deliveries.next_attempt_at',
  'webhook_deliveries.created_at',
  'webhook_deliveries.updated_at',
  'webhook_events.type as event_type',
] as const;

const BY_DELIVERY_CREATED: SortKey = { at: 'webhook_deliveries.created_at', id: 'webhook_deliveries.id' };

/** An endpoint's deliveries, newest first, one cursor page; `status` narrows it. */
export async function listDeliveries(db: Executor, endpointId: number, page: CursorRequest, status?: OutboundDeliveryStatus) {
  let q = db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select(DELIVERY_COLUMNS)
    .where('webhook_deliveries.endpoint_id', '=', endpointId);
  if (status) q = q.where('webhook_deliveries.status', '=', status);
  return keysetPage(q, BY_DELIVERY_CREATED, page);
}

export type DeliveryRow = Awaited<ReturnType<typeof listDeliveries>>['items'][number];

/** A delivery of one of the workspace's endpoints, with its endpoint's state. */
export async function findDelivery(db: Executor, workspaceId: number, id: number) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
    .select(DELIVERY_COLUMNS)
    .select(['webhook_endpoints.enabled as endpoint_enabled'])
    .where('webhook_endpoints.workspace_id', '=', workspaceId)
    .where('webhook_deliveries.id', '=', id)
    .executeTakeFirst();
}

/** Every attempt of these deliveries, oldest first. */
export async function listAttempts(db: Executor, deliveryIds: number[]): Promise<Selectable<WebhookAttemptsTable>[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('delivery_id')
    .orderBy('id')
    .execute();
}

/**
 * A delivery made pending again with a new job (redelivery): its attempt count starts over,
 * its attempts so far are kept, and any job queued before is stale from now on. False when
 * the delivery is gone (its endpoint deleted).
 */
export async function restartDelivery(db: Executor, delivery: { id: number; eventId: string }, jobId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempt_count: 0, job_id: jobId, next_attempt_at: at, updated_at: at })
    .where('id', '=', delivery.id)
    .where('event_id', '=', delivery.eventId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** What an attempt needs: the delivery, its event's body, the endpoint and its secrets. */
export interface DispatchContext {
  id: number;
  event_id: string;
  status: OutboundDeliveryStatus;
  job_id: string | null;
  attempt_count: number;
  next_attempt_at: Date | null;
  event_type: string;
  body: string;
  endpoint_id: number;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  signature_scheme: 'service' | 'standard';
  failing_since: Date | null;
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: Date | null;
}

/** DispatchContext's columns, of deliveries `d` joined to their events `ev` and endpoints `ep`. */
const CONTEXT_COLUMNS = sql`d.id, d.event_id, d.status, d.job_id, d.attempt_count, d.next_attempt_at, ev.type AS event_type, ev.body,
  ep.id AS endpoint_id, ep.url, ep.enabled, ep.disabled_reason, ep.signature_scheme, ep.failing_since,
  ep.secret_sealed, ep.previous_secret_sealed, ep.previous_secret_expires_at`;

/**
 * The contexts of a fetched job's deliveries. With their events' ids (jobs queued since the
 * tables were partitioned carry them) only the days of those events are read; without, every
 * day's index on the delivery id.
 */
export async function findDispatchContexts(db: Executor, deliveryIds: number[], eventIds?: string[]): Promise<DispatchContext[]> {
  if (deliveryIds.length === 0) return [];
  const days =
    eventIds && eventIds.length > 0 ? sql`AND ${partitionKeyIn('d.event_id', eventIds)} AND ${partitionKeyIn('ev.id', eventIds)}` : sql``;
  const { rows } = await sql<DispatchContext>`
    SELECT ${CONTEXT_COLUMNS}
    FROM webhook_deliveries d
    JOIN webhook_events ev ON ev.id = d.event_id
    JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
    WHERE d.id = ANY(${deliveryIds}::bigint[]) ${days}`.execute(db);
  return rows;
}

/**
 * Moves to job `jobId` up to `limit` of its endpoint's pending deliveries that are due and were
 * made at or after `since`, oldest first, never one of `own` (the job's own): the work of jobs
 * queued behind it, which a job that found its endpoint slow takes in (dispatcher.ts). Answers
 * their contexts, oldest first, each with the job it named before, whose attempt finds it stale
 * from now on. The endpoint's index is read from `since` on, and an event made before `since`
 * has an id below uuid7Floor(since) (the outbox makes both from one clock reading), so only
 * the days from `since` on are opened.
 */
export async function absorbDeliveries(
  db: Executor,
  take: { endpointId: number; jobId: string; own: number[]; since: Date; limit: number },
  now: Date,
): Promise<(DispatchContext & { previous_job_id: string | null })[]> {
  const floor = uuid7Floor(take.since.getTime());
  const { rows } = await sql<DispatchContext & { previous_job_id: string | null }>`
    WITH moved AS (
      UPDATE webhook_deliveries AS d SET job_id = ${take.jobId}
      FROM (
        SELECT id, event_id, job_id FROM webhook_deliveries
        WHERE endpoint_id = ${take.endpointId} AND created_at >= ${take.since} AND event_id >= ${floor}::uuid
          AND status = 'pending' AND next_attempt_at <= ${now} AND id <> ALL(${take.own}::bigint[])
        ORDER BY created_at, id
        LIMIT ${take.limit}
        FOR UPDATE SKIP LOCKED
      ) AS t
      WHERE d.id = t.id AND d.event_id = t.event_id AND d.event_id >= ${floor}::uuid
      RETURNING d.*, t.job_id AS previous_job_id
    )
    SELECT ${CONTEXT_COLUMNS}, d.previous_job_id
    FROM moved d
    JOIN webhook_events ev ON ev.id = d.event_id AND ev.id >= ${floor}::uuid
    JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
    ORDER BY d.created_at, d.id`.execute(db);
  return rows;
}

export interface AttemptRecord {
  deliveryId: number;
  eventId: string;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export interface DeliverySettlement {
  id: number;
  /** The delivery's event: with the id, it names one row of one day. */
  eventId: string;
  /** The job that made the attempt: a delivery redelivered meanwhile has another, and is left alone. */
  jobId: string;
  status: OutboundDeliveryStatus;
  /** Attempts counted in this round after this one. */
  attemptCount: number;
  /** With `pending`: the job of the next attempt and when it runs. */
  nextJobId: string | null;
  nextAttemptAt: Date | null;
}

/**
 * Records attempts and where each delivery stands after them, in one statement. Returns the
 * deliveries it changed.
 */
export async function recordAttempts(db: Executor, attempts: AttemptRecord[], rows: DeliverySettlement[], at: Date) {
  if (rows.length === 0 && attempts.length === 0) return [];
  const { rows: changed } = await sql<{
    id: number;
    endpoint_id: number;
    event_id: string;
    status: OutboundDeliveryStatus;
    job_id: string | null;
    next_attempt_at: Date | null;
  }>`
    WITH attempts AS (
      INSERT INTO webhook_attempts (delivery_id, event_id, attempted_at, status_code, duration_ms, error)
      SELECT * FROM unnest(${attempts.map((a) => a.deliveryId)}::bigint[], ${attempts.map((a) => a.eventId)}::uuid[], ${attempts.map((a) => a.attemptedAt)}::timestamptz[],
                           ${attempts.map((a) => a.statusCode)}::int[], ${attempts.map((a) => a.durationMs)}::int[], ${attempts.map((a) => a.error)}::text[])
    )
    UPDATE webhook_deliveries AS d
    SET status = v.status, attempt_count = v.attempt_count, job_id = v.next_job_id, next_attempt_at = v.next_attempt_at, updated_at = ${at}
    FROM unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.eventId)}::uuid[], ${rows.map((r) => r.jobId)}::uuid[], ${rows.map((r) => r.status)}::text[],
                ${rows.map((r) => r.attemptCount)}::int[], ${rows.map((r) => r.nextJobId)}::uuid[], ${rows.map((r) => r.nextAttemptAt)}::timestamptz[])
      AS v(id, event_id, job_id, status, attempt_count, next_job_id, next_attempt_at)
    WHERE d.id = v.id AND d.event_id = v.event_id AND ${partitionKeyIn(
      'd.event_id',
      rows.map((r) => r.eventId),
    )} AND d.job_id = v.job_id AND d.status = 'pending'
    RETURNING d.id, d.endpoint_id, d.event_id, d.status, d.job_id, d.next_attempt_at`.execute(db);
  return changed;
}
