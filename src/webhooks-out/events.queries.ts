import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { encodeLogPosition, type LogPosition } from '../http/pagination.js';

export interface LogRow {
  body: string;
  txid: string;
  seq: string;
}

/**
 * One page of a workspace's event log, oldest first (docs/outbound-webhooks.md, "Event log").
 *
 * Events are ordered by (writing transaction, insertion) and only those of transactions older
 * than every transaction still running are read: a transaction that began earlier but commits
 * later would otherwise land behind a position a consumer has already passed, a gap it never
 * fills. Its events show once it ends (or rolls back); a page is never missing one in between.
 * `ping`s are one endpoint's test, not the workspace's events, and stay out. `nextCursor` is
 * the position after the page's last event (absent on an empty page: nothing new yet).
 * The ORDER BY names the table's columns: bare, `txid` and `seq` would be the text aliases
 * of the SELECT list, and `'10' < '9'` would put a page out of order and skip events.
 */
export async function listEventLog(
  db: Executor,
  workspaceId: number,
  page: { limit: number; after: LogPosition | undefined },
  types: string[] | undefined,
) {
  const { rows } = await sql<LogRow>`
    SELECT body, txid::text AS txid, seq::text AS seq
    FROM webhook_events
    WHERE workspace_id = ${workspaceId}
      AND type <> 'ping'
      AND txid < pg_snapshot_xmin(pg_current_snapshot())
      ${page.after ? sql`AND (txid, seq) > (${page.after.txid}::xid8, ${page.after.seq}::bigint)` : sql``}
      ${types ? sql`AND type = ANY(${types}::text[])` : sql``}
    ORDER BY webhook_events.txid, webhook_events.seq
    LIMIT ${page.limit}`.execute(db);
  const last = rows[rows.length - 1];
  return { items: rows, meta: last ? { nextCursor: encodeLogPosition(last) } : {} };
}

/**
 * Deletes the events whose ids `eventIds` selects (a subquery) with their deliveries and the
 * deliveries' attempts, in one statement; returns how many events went. The three tables are
 * partitioned by the event's day and have no foreign keys between them to cascade along
 * (docs/operations.md, "Partitions"): whoever deletes an event deletes the rest with it.
 */
export async function deleteEvents(db: Executor, eventIds: RawBuilder<unknown>, options: { idsBelow?: string } = {}): Promise<number> {
  // With a bound on the event ids, the deliveries and attempts of only the days below it (and
  // the DEFAULT) are probed, not every day's; attempts older than their event_id column have none.
  const below = options.idsBelow;
  const { rows } = await sql<{ n: number }>`
    WITH events AS (DELETE FROM webhook_events WHERE id IN (${eventIds}) RETURNING id),
         deliveries AS (
           DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events) ${below ? sql`AND event_id < ${below}::uuid` : sql``}
           RETURNING id),
         attempts AS (
           DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM deliveries)
           ${below ? sql`AND (event_id < ${below}::uuid OR event_id IS NULL)` : sql``})
    SELECT count(*)::int AS n FROM events`.execute(db);
  return rows[0]?.n ?? 0;
}
