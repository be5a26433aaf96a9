import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';

/**
 * SQL of reports (docs/reports.md), over the recorded conversations only (never messages). A
 * conversation still open is read with its thread's current assignee, team, labels and message
 * counts; a resolved one with what it was at its resolution. Each figure counts its own event in
 * the range: openings, first answers, resolutions, ratings.
 */

export const GROUP_BYS = ['none', 'agent', 'team', 'connection', 'label'] as const;
export type GroupBy = (typeof GROUP_BYS)[number];

export interface Range {
  workspaceId: number;
  from: Date;
  to: Date;
}

/**
 * The conversations of a workspace with any event in the range, as the reports read them: only
 * the columns the figures use. A resolved conversation carries all it needs; only an open one
 * reads its thread (its current group and message counts), so only those join the threads.
 */
function base(r: Range) {
  const inRange = (col: string) => sql`(c.${sql.ref(col)} >= ${r.from} AND c.${sql.ref(col)} < ${r.to})`;
  return sql`
    SELECT ${inRange('opened_at')} AS is_opened, ${inRange('first_response_at')} AS is_answered,
      ${inRange('resolved_at')} AS is_resolved, ${inRange('csat_at')} AS is_rated,
      c.assignee_id AS g_agent, c.team_id AS g_team, c.labels AS g_labels, c.connection_id,
      c.first_response_seconds AS fr, c.first_response_business_seconds AS fr_b,
      c.resolution_seconds AS res, c.resolution_business_seconds AS res_b,
      c.messages_in AS n_in, c.messages_out AS n_out, c.sla_breaches, c.csat_rating
    FROM conversations c
    WHERE c.workspace_id = ${r.workspaceId} AND c.resolved_at IS NOT NULL
      AND (${inRange('opened_at')} OR ${inRange('first_response_at')} OR ${inRange('resolved_at')} OR ${inRange('csat_at')})
    UNION ALL
    SELECT ${inRange('opened_at')}, ${inRange('first_response_at')}, false, ${inRange('csat_at')},
      t.assignee_id, t.team_id, t.labels, c.connection_id,
      c.first_response_seconds, c.first_response_business_seconds, NULL, NULL,
      t.conversation_messages_in, t.conversation_messages_out, c.sla_breaches, c.csat_rating
    FROM conversations c
    JOIN threads t ON t.id = c.thread_id
    WHERE c.workspace_id = ${r.workspaceId} AND c.resolved_at IS NULL
      AND (${inRange('opened_at')} OR ${inRange('first_response_at')} OR ${inRange('csat_at')})`;
}

const GROUP_KEY: Record<GroupBy, RawBuilder<unknown>> = {
  none: sql`NULL::text`,
  agent: sql`b.g_agent::text`,
  team: sql`b.g_team::text`,
  connection: sql`b.connection_id::text`,
  label: sql`g.label`,
};

/**
 * [median, p90, average]: both percentiles from one sort of the column (percentile_cont with the
 * two fractions at once gives what two calls give), nulls when the group has no value.
 */
const stats = (col: string, when: string) => sql`
  COALESCE(percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY b.${sql.ref(col)}) FILTER (WHERE b.${sql.ref(when)}),
           ARRAY[NULL, NULL]::float8[])
    || (avg(b.${sql.ref(col)}) FILTER (WHERE b.${sql.ref(when)}))::float8`;

export interface SummaryRow {
  key: string | null;
  conversations: number;
  resolved: number;
  fr: [number | null, number | null, number | null];
  res: [number | null, number | null, number | null];
  fr_b: [number | null, number | null, number | null];
  res_b: [number | null, number | null, number | null];
  messages_in: number;
  messages_out: number;
  sla_breaches: number;
  csat_responses: number;
  csat_average: number | null;
  csat_satisfied: number;
}

/** One row per group (a conversation with several labels is in each of theirs; none: the null group). */
export async function summaryRows(db: Executor, r: Range, groupBy: GroupBy): Promise<SummaryRow[]> {
  const labels =
    groupBy === 'label'
      ? sql`CROSS JOIN LATERAL unnest(CASE WHEN cardinality(b.g_labels) = 0 THEN ARRAY[NULL::text] ELSE b.g_labels END) AS g(label)`
      : sql``;
  const { rows } = await sql<SummaryRow>`
    SELECT ${GROUP_KEY[groupBy]} AS key,
      count(*) FILTER (WHERE b.is_opened)::int AS conversations,
      count(*) FILTER (WHERE b.is_resolved)::int AS resolved,
      ${stats('fr', 'is_answered')} AS fr,
      ${stats('res', 'is_resolved')} AS res,
      ${stats('fr_b', 'is_answered')} AS fr_b,
      ${stats('res_b', 'is_resolved')} AS res_b,
      COALESCE(sum(b.n_in) FILTER (WHERE b.is_opened), 0)::int AS messages_in,
      COALESCE(sum(b.n_out) FILTER (WHERE b.is_opened), 0)::int AS messages_out,
      COALESCE(sum(b.sla_breaches) FILTER (WHERE b.is_resolved), 0)::int AS sla_breaches,
      count(*) FILTER (WHERE b.is_rated)::int AS csat_responses,
      avg(b.csat_rating) FILTER (WHERE b.is_rated)::float8 AS csat_average,
      count(*) FILTER (WHERE b.is_rated AND b.csat_rating >= 4)::int AS csat_satisfied
    FROM (${base(r)}) b ${labels}
    GROUP BY 1
    ORDER BY 1 NULLS LAST`.execute(db);
  return rows;
}

export const METRICS = ['conversations', 'resolved', 'firstResponseMedian', 'resolutionMedian', 'messagesIn', 'csatAverage'] as const;
export type Metric = (typeof METRICS)[number];
export const INTERVALS = ['hour', 'day', 'week'] as const;
export type Interval = (typeof INTERVALS)[number];

/** Each metric: the time it is bucketed by and the value of a bucket. */
const METRIC_SQL: Record<Metric, { at: string; value: RawBuilder<unknown> }> = {
  conversations: { at: 'opened_at', value: sql`count(*)::float8` },
  resolved: { at: 'resolved_at', value: sql`count(*)::float8` },
  firstResponseMedian: { at: 'first_response_at', value: sql`percentile_cont(0.5) WITHIN GROUP (ORDER BY c.first_response_seconds)` },
  resolutionMedian: { at: 'resolved_at', value: sql`percentile_cont(0.5) WITHIN GROUP (ORDER BY c.resolution_seconds)` },
  messagesIn: { at: 'opened_at', value: sql`sum(COALESCE(c.messages_in, t.conversation_messages_in, 0))::float8` },
  csatAverage: { at: 'csat_at', value: sql`avg(c.csat_rating)::float8` },
};

/**
 * The non-empty buckets of a metric: index into `starts` → value. A bucket holds what happened
 * from its start to the next one (the last one to `r.to`): the starts come from the caller, so
 * the rows land in exactly the buckets it lists, whatever the zone's offsets do (a 30-minute DST
 * change, a repeated hour).
 */
export async function timeseriesRows(db: Executor, r: Range, metric: Metric, starts: Date[]) {
  const m = METRIC_SQL[metric];
  const at = sql`c.${sql.ref(m.at)}`;
  const join = metric === 'messagesIn' ? sql`LEFT JOIN threads t ON c.resolved_at IS NULL AND t.id = c.thread_id` : sql``;
  const { rows } = await sql<{ bucket: number; value: number | null }>`
    SELECT width_bucket(${at}, ${starts}::timestamptz[]) AS bucket, ${m.value} AS value
    FROM conversations c ${join}
    WHERE c.workspace_id = ${r.workspaceId} AND ${at} >= ${r.from} AND ${at} < ${r.to}
    GROUP BY 1`.execute(db);
  return new Map(rows.map((row) => [Number(row.bucket) - 1, row.value]));
}

export interface CsvRow {
  id: number;
  thread_id: number;
  connection_id: number;
  opened_at: Date;
  reopened: boolean;
  first_response_at: Date | null;
  resolved_at: Date | null;
  assignee_id: number | null;
  team_id: number | null;
  labels: string[];
  priority: string;
  messages_in: number;
  messages_out: number;
  sla_breaches: number;
  first_response_seconds: number | null;
  first_response_business_seconds: number | null;
  resolution_seconds: number | null;
  resolution_business_seconds: number | null;
  csat_rating: number | null;
  csat_comment: string | null;
}

/** A page of the conversations opened in the range, in (opened_at, id) order after `after`. */
export async function csvPage(db: Executor, r: Range, after: { at: Date; id: number } | null, limit: number) {
  const { rows } = await sql<CsvRow>`
    SELECT c.id, c.thread_id, c.connection_id, c.opened_at, c.reopened, c.first_response_at, c.resolved_at,
      CASE WHEN c.resolved_at IS NULL THEN t.assignee_id ELSE c.assignee_id END AS assignee_id,
      CASE WHEN c.resolved_at IS NULL THEN t.team_id ELSE c.team_id END AS team_id,
      CASE WHEN c.resolved_at IS NULL THEN t.labels ELSE c.labels END AS labels,
      CASE WHEN c.resolved_at IS NULL THEN t.priority ELSE c.priority END AS priority,
      COALESCE(c.messages_in, t.conversation_messages_in, 0) AS messages_in,
      COALESCE(c.messages_out, t.conversation_messages_out, 0) AS messages_out,
      c.sla_breaches, c.first_response_seconds, c.first_response_business_seconds, c.resolution_seconds,
      c.resolution_business_seconds, c.csat_rating, c.csat_comment
    FROM (
      -- The page first, through the index, then its open conversations' threads.
      SELECT * FROM conversations
      WHERE workspace_id = ${r.workspaceId} AND opened_at >= ${r.from} AND opened_at < ${r.to}
        ${after ? sql`AND (opened_at, id) > (${after.at}, ${after.id})` : sql``}
      ORDER BY opened_at, id
      LIMIT ${limit}
    ) c
    LEFT JOIN threads t ON c.resolved_at IS NULL AND t.id = c.thread_id
    ORDER BY c.opened_at, c.id`.execute(db);
  return rows;
}

/** Names of a workspace's users, teams or connections, for the groups of a summary. */
export async function groupNames(db: Executor, workspaceId: number, groupBy: GroupBy, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0 || (groupBy !== 'agent' && groupBy !== 'team' && groupBy !== 'connection')) return new Map();
  const table = groupBy === 'agent' ? 'users' : groupBy === 'team' ? 'teams' : 'connections';
  const rows = await db.selectFrom(table).select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}
