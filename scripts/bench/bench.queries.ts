// What the bench reads from the database the service wrote: counts of the inbox and the queue,
// and the service's own timestamps, so measured times do not depend on when a poll noticed.
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Db, Executor } from '../../src/db/database.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';

export async function inboxRows(db: Db, onlyProcessed = false): Promise<number> {
  const where = onlyProcessed ? sql`status = 'processed'` : sql`true`;
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox WHERE ${where}`.execute(db);
  return rows[0]!.n;
}

/** Deliveries queued: each job of the webhook queue carries a batch of ids. */
export async function queuedDeliveries(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(jsonb_array_length(data->'ids')), 0)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(db);
  return rows[0]!.n;
}

/** The postmaster's pid, as the parent of the checkpointer (the bench may not have started it itself). */
export async function postmasterPid(db: Db): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'`.execute(db);
  return Number(readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
}

/** Deliveries whose job is not done: an index lookup, cheap enough to poll while a worker runs. */
export async function pendingDeliveries(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT coalesce(sum(jsonb_array_length(data->'ids')), 0)::int AS n FROM pgboss.job
    WHERE name = ${WEBHOOK_QUEUE} AND state IN ('created', 'retry', 'active')`.execute(db);
  return rows[0]!.n;
}

/**
 * Whether any job of the webhook queue is still to run: what a drain's end is polled with every
 * 100 ms. An EXISTS stops at the first row; pendingDeliveries reads every job's ids (about 4 ms
 * a call on a backlog, PostgreSQL CPU that a frequent poll would add to the drain's).
 */
/** Jobs of the webhook queue: with no worker running, one per group commit of ingestion. */
export async function webhookJobs(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(db);
  return rows[0]!.n;
}

export async function anyDeliveryPending(db: Db): Promise<boolean> {
  const { rows } = await sql<{ pending: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND state IN ('created', 'retry', 'active')) AS pending`.execute(
    db,
  );
  return rows[0]!.pending;
}

/**
 * Whether a message's search vector is still to compute (a build that indexes after the batch);
 * false where the column is generated or absent. An EXISTS, polled every 100 ms.
 */
export async function anyMessageUnindexed(db: Db): Promise<boolean> {
  try {
    const { rows } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM messages WHERE search_vector IS NULL) AS any`.execute(db);
    return rows[0]!.any;
  } catch {
    return false;
  }
}

/**
 * Seconds from the first processed batch to the last, by the database's clock. A batch stamps
 * processed_at as it starts, so worker start-up is not counted, and neither is the last
 * batch's own few tens of milliseconds (under 1 % of a drain of several seconds).
 */
export async function drainSeconds(db: Db): Promise<number> {
  const { rows } = await sql<{ seconds: number }>`
    SELECT extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds FROM webhook_inbox`.execute(db);
  return Math.max(rows[0]!.seconds, 0.001);
}

/** Received → processed, p50 and p99 in ms, of the deliveries received since `since`. */
export async function processedLatency(db: Db, since: Date): Promise<{ p50: number; p99: number }> {
  const { rows } = await sql<{ p50: number; p99: number }>`
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p50,
           percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - created_at) * 1000) AS p99
    FROM webhook_inbox WHERE created_at >= ${since} AND processed_at IS NOT NULL`.execute(db);
  return { p50: Math.round(rows[0]!.p50), p99: Math.round(rows[0]!.p99) };
}

export async function threadIds(db: Db, limit: number): Promise<number[]> {
  return (await sql<{ id: number }>`SELECT id FROM threads ORDER BY id LIMIT ${limit}`.execute(db)).rows.map((r) => r.id);
}

export async function queuedReplies(db: Db): Promise<number> {
  return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM messages WHERE direction = 'outbound' AND status = 'queued'`.execute(db))
    .rows[0]!.n;
}

export async function lastMessageId(db: Db): Promise<number> {
  return Number((await sql<{ id: string }>`SELECT coalesce(max(id), 0)::bigint AS id FROM messages`.execute(db)).rows[0]!.id);
}

/** A template reply as the route stores it: the rendered body and the `template` WhatsApp is sent. */
export interface QueuedTemplate {
  text: string;
  template: unknown;
}

/**
 * `count` queued replies spread over the threads, in one transaction, as a burst of agents
 * would leave them; with `template`, template replies.
 */
export async function insertQueuedReplies(trx: Executor, count: number, threads: number, template?: QueuedTemplate): Promise<number[]> {
  const text = template ? sql`${template.text}` : sql`'Reply ' || g || ': thanks, your order is on its way.'`;
  const json = template ? JSON.stringify(template.template) : null;
  const { rows } = await sql<{ id: number }>`
    INSERT INTO messages (workspace_id, thread_id, connection_id, direction, text, status, template)
    SELECT t.workspace_id, t.id, t.connection_id, 'outbound', ${text}, 'queued', ${json}::jsonb
    FROM generate_series(1, ${count}) g JOIN (SELECT *, row_number() OVER (ORDER BY id) - 1 AS n FROM threads) t ON t.n = g % ${threads}
    RETURNING id`.execute(trx);
  return rows.map((r) => r.id);
}

/**
 * The reply phase run alone (`--send-only`): `count` WhatsApp contacts, each with a thread on
 * the connection that wrote an hour ago (its reply window open), as the processing phase
 * would have left them.
 */
export async function seedReplyThreads(db: Db, workspaceId: number, connectionId: number, count: number): Promise<void> {
  await sql`
    WITH c AS (
      INSERT INTO contacts (workspace_id, name) SELECT ${workspaceId}, 'Bench contact ' || g FROM generate_series(1, ${count}) g RETURNING id
    ), h AS (
      INSERT INTO contact_handles (contact_id, workspace_id, integration_key, external_id)
      SELECT id, ${workspaceId}, 'whatsapp', (4915100000000 + id)::text FROM c
    )
    INSERT INTO threads (workspace_id, connection_id, contact_id, last_message_preview, last_inbound_at)
    SELECT ${workspaceId}, ${connectionId}, id, 'Hello', now() - interval '1 hour' FROM c`.execute(db);
}

/** Gives the connection a WABA and one approved template, as a sync would have left them. */
export async function seedTemplate(db: Db, connectionId: number, template: { name: string; body: string }): Promise<void> {
  await sql`UPDATE connections SET business_account_id = '1029384756', templates_sync_status = 'succeeded' WHERE id = ${connectionId}`.execute(
    db,
  );
  const components = JSON.stringify([{ type: 'BODY', text: template.body }]);
  await sql`
    INSERT INTO whatsapp_templates (connection_id, name, language, category, status, components, parameter_count)
    VALUES (${connectionId}, ${template.name}, 'en_US', 'UTILITY', 'APPROVED', ${components}::jsonb, 2)
    ON CONFLICT DO NOTHING`.execute(db);
}

/** Replies sent after message `afterId`, and the seconds from the first sent to the last. */
export async function sentReplies(db: Db, afterId: number): Promise<{ sent: number; seconds: number }> {
  const { rows } = await sql<{ sent: number; seconds: number }>`
    SELECT count(*)::int AS sent, extract(epoch FROM max(updated_at) - min(updated_at))::float8 AS seconds
    FROM messages WHERE id > ${afterId} AND direction = 'outbound' AND status = 'sent'`.execute(db);
  return { sent: rows[0]!.sent, seconds: Math.max(rows[0]!.seconds ?? 0, 0.001) };
}

/** WAL written and checkpoints since the cluster's statistics were reset (PostgreSQL 17 and later). */
export interface WalTotals {
  bytes: number;
  fullPageImages: number;
  checkpointsRequested: number;
  checkpointsTimed: number;
}

/** The cluster's WAL and checkpoint counters, or undefined before PostgreSQL 17 (no pg_stat_checkpointer). */
export async function walTotals(db: Db): Promise<WalTotals | undefined> {
  try {
    const { rows } = await sql<{ bytes: string; fpi: string; requested: string; timed: string }>`
      SELECT w.wal_bytes AS bytes, w.wal_fpi AS fpi, c.num_requested AS requested, c.num_timed AS timed
      FROM pg_stat_wal w, pg_stat_checkpointer c`.execute(db);
    const r = rows[0]!;
    return {
      bytes: Number(r.bytes),
      fullPageImages: Number(r.fpi),
      checkpointsRequested: Number(r.requested),
      checkpointsTimed: Number(r.timed),
    };
  } catch {
    return undefined;
  }
}
