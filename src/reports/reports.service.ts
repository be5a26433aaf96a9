import { Readable } from 'node:stream';
import { DateTime, IANAZone } from 'luxon';
import type { Executor } from '../db/database.js';
import { errors } from '../http/errors.js';
import { workspaceSettings } from '../workspaces/workspace-settings.js';
import {
  type CsvRow,
  csvPage,
  type GroupBy,
  groupNames,
  type Interval,
  type Metric,
  type Range,
  summaryRows,
  timeseriesRows,
} from './reports.queries.js';

/** The longest range a report reads. */
export const MAX_RANGE_DAYS = 366;
/** The most buckets one timeseries answers (a year of hours fits). */
export const MAX_BUCKETS = 9000;
/** Rows of the CSV read per statement: memory stays flat however long the range. */
export const CSV_PAGE = 1000;
/** Rows per piece written to the response. */
const CSV_CHUNK_ROWS = 32;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The zone a report reads dates in: the one asked for, else the workspace's business hours' zone, else UTC. */
export async function reportZone(db: Executor, workspaceId: number, asked: string | undefined): Promise<string> {
  const timezone = asked ?? ((await workspaceSettings(db, workspaceId)).businessHours?.timezone as string | undefined) ?? 'UTC';
  if (!IANAZone.isValidZone(timezone)) throw errors.validation(`timezone: "${timezone.slice(0, 64)}" is not an IANA zone name`);
  return timezone;
}

/**
 * A bound of a range: an instant (ISO 8601 with an offset) or a date, a date being a whole day in
 * `timezone` (a `to` date is included: its bound is the next midnight). 422 naming the field.
 */
export function readInstant(value: string, field: 'from' | 'to', timezone: string): Date {
  if (DATE_ONLY.test(value)) {
    const day = DateTime.fromISO(value, { zone: timezone });
    if (!day.isValid) throw errors.validation(`${field}: "${value}" is not a date`);
    // The next midnight, also after a day that began late (a zone that skips midnight).
    return (field === 'to' ? day.plus({ days: 1 }).startOf('day') : day).toJSDate();
  }
  const at = DateTime.fromISO(value, { setZone: true });
  if (!at.isValid || !/([zZ]|[+-]\d{2}:?\d{2})$/.test(value))
    throw errors.validation(`${field}: "${value.slice(0, 40)}" is neither a date (YYYY-MM-DD) nor an instant with an offset`);
  return at.toJSDate();
}

/**
 * A report's range: `from` and `to` are instants (ISO 8601 with an offset) or dates, a date being
 * a whole day in `timezone` (`to` included). The zone defaults to the workspace's business hours'
 * zone, else UTC.
 */
export async function readRange(
  db: Executor,
  workspaceId: number,
  q: { from: string; to: string; timezone?: string },
): Promise<Range & { timezone: string }> {
  const timezone = await reportZone(db, workspaceId, q.timezone);
  const from = readInstant(q.from, 'from', timezone);
  const to = readInstant(q.to, 'to', timezone);
  if (!(to.getTime() > from.getTime())) throw errors.validation('to: must be after from');
  if (to.getTime() - from.getTime() > (MAX_RANGE_DAYS + 1) * 86_400_000)
    throw errors.validation(`to: at most ${MAX_RANGE_DAYS} days after from`);
  return { workspaceId, from, to, timezone };
}

type Stats = { median: number | null; p90: number | null; average: number | null };
const statsOf = ([median, p90, average]: [number | null, number | null, number | null]): Stats => ({ median, p90, average });

/** `GET /v1/reports/summary`: the figures of each group (docs/reports.md). */
export async function summary(db: Executor, range: Range & { timezone: string }, groupBy: GroupBy) {
  const rows = await summaryRows(db, range, groupBy);
  const ids = groupBy === 'label' || groupBy === 'none' ? [] : rows.flatMap((r) => (r.key === null ? [] : [Number(r.key)]));
  const names = await groupNames(db, range.workspaceId, groupBy, ids);
  const groups = rows.map((r) => ({
    group:
      groupBy === 'none'
        ? null
        : groupBy === 'label'
          ? { id: r.key, name: r.key }
          : { id: r.key === null ? null : Number(r.key), name: r.key === null ? null : (names.get(Number(r.key)) ?? null) },
    conversations: r.conversations,
    resolved: r.resolved,
    firstResponseSeconds: statsOf(r.fr),
    resolutionSeconds: statsOf(r.res),
    business: { firstResponseSeconds: statsOf(r.fr_b), resolutionSeconds: statsOf(r.res_b) },
    messagesIn: r.messages_in,
    messagesOut: r.messages_out,
    slaBreaches: r.sla_breaches,
    csat: {
      responses: r.csat_responses,
      average: r.csat_average,
      satisfiedShare: r.csat_responses === 0 ? null : r.csat_satisfied / r.csat_responses,
    },
  }));
  // The whole workspace is one group, present when the range is empty too.
  if (groupBy === 'none' && groups.length === 0) groups.push(emptyGroup());
  return { from: range.from.toISOString(), to: range.to.toISOString(), timezone: range.timezone, groupBy, groups };
}

function emptyGroup() {
  const none: Stats = { median: null, p90: null, average: null };
  return {
    group: null,
    conversations: 0,
    resolved: 0,
    firstResponseSeconds: none,
    resolutionSeconds: none,
    business: { firstResponseSeconds: none, resolutionSeconds: none },
    messagesIn: 0,
    messagesOut: 0,
    slaBreaches: 0,
    csat: { responses: 0, average: null, satisfiedShare: null },
  };
}

const COUNTS: Metric[] = ['conversations', 'resolved', 'messagesIn'];

/**
 * `GET /v1/reports/timeseries`: every bucket from the one holding `from` to the one before `to`,
 * each starting at a local hour, midnight or Monday midnight in the zone (so a day is 23 or 25
 * hours across a DST change); an empty bucket is 0 for counts, null for medians and averages.
 * Each bucket holds what happened from its start to the next one.
 */
export async function timeseries(db: Executor, range: Range & { timezone: string }, metric: Metric, interval: Interval) {
  const starts: DateTime[] = [];
  const end = range.to.getTime();
  for (let s: DateTime = DateTime.fromJSDate(range.from, { zone: range.timezone }).startOf(interval); s.toMillis() < end; ) {
    starts.push(s);
    if (starts.length > MAX_BUCKETS)
      throw errors.validation(`interval: at most ${MAX_BUCKETS} buckets; choose a longer interval or a shorter range`);
    // A day or week after one that began late (a zone that skips midnight) still starts at midnight.
    s = interval === 'hour' ? nextLocalHour(s) : s.plus({ [interval]: 1 }).startOf(interval);
  }
  const values = await timeseriesRows(
    db,
    range,
    metric,
    starts.map((s) => s.toJSDate()),
  );
  const empty = COUNTS.includes(metric) ? 0 : null;
  return starts.map((s, i) => ({ start: s.toISO({ suppressMilliseconds: true })!, value: values.get(i) ?? empty }));
}

const QUARTER_HOUR = 15 * 60_000;

/**
 * The start of the next local hour after `s`: the next instant whose wall clock reads a whole
 * hour, or at which the wall clock enters another hour (a DST change that skips to 02:30). An
 * hour repeated in autumn starts twice; a half hour repeated (Lord Howe's 01:30–02:00) stays in
 * its hour. Offsets and their changes fall on quarter hours, so that is the step looked at.
 */
function nextLocalHour(s: DateTime): DateTime {
  const hourOn = s.plus({ hours: 1 });
  if (s.minute === 0 && hourOn.offset === s.offset) return hourOn;
  for (let t = s.toMillis() + QUARTER_HOUR; ; t += QUARTER_HOUR) {
    const at = DateTime.fromMillis(t, { zone: s.zone });
    if (at.minute === 0 || at.hour !== s.hour || at.day !== s.day) return at;
  }
}

export const CSV_COLUMNS = [
  'conversationId',
  'threadId',
  'connectionId',
  'openedAt',
  'reopened',
  'firstResponseAt',
  'resolvedAt',
  'assigneeId',
  'teamId',
  'labels',
  'priority',
  'messagesIn',
  'messagesOut',
  'slaBreaches',
  'firstResponseSeconds',
  'firstResponseBusinessSeconds',
  'resolutionSeconds',
  'resolutionBusinessSeconds',
  'csatRating',
  'csatComment',
] as const;

/** One RFC 4180 field: quoted when it holds a quote, comma, CR or LF, quotes doubled. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = value instanceof Date ? value.toISOString() : Array.isArray(value) ? value.join(' ') : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const csvLine = (fields: unknown[]) => `${fields.map(csvField).join(',')}\r\n`;

function csvRow(r: CsvRow) {
  return csvLine([
    r.id,
    r.thread_id,
    r.connection_id,
    r.opened_at,
    r.reopened,
    r.first_response_at,
    r.resolved_at,
    r.assignee_id,
    r.team_id,
    r.labels,
    r.priority,
    r.messages_in,
    r.messages_out,
    r.sla_breaches,
    r.first_response_seconds,
    r.first_response_business_seconds,
    r.resolution_seconds,
    r.resolution_business_seconds,
    r.csat_rating,
    r.csat_comment,
  ]);
}

/**
 * `GET /v1/reports/conversations.csv`: the header, then a row per conversation opened in the
 * range, read a page at a time as the client takes them (a stream's backpressure), so the
 * whole never sits in memory.
 */
export function conversationsCsv(db: Executor, range: Range): Readable {
  async function* lines() {
    yield csvLine([...CSV_COLUMNS]);
    let after: { at: Date; id: number } | null = null;
    for (;;) {
      const rows = await csvPage(db, range, after, CSV_PAGE);
      if (rows.length === 0) return;
      // Written in small pieces: garbage under V8's large-object size is freed by the young
      // generation's quick collections, so memory stays flat however many pages pass.
      for (let i = 0; i < rows.length; i += CSV_CHUNK_ROWS)
        yield rows
          .slice(i, i + CSV_CHUNK_ROWS)
          .map(csvRow)
          .join('');
      const last = rows[rows.length - 1]!;
      after = { at: last.opened_at, id: Number(last.id) };
      if (rows.length < CSV_PAGE) return;
    }
  }
  return Readable.from(lines());
}
