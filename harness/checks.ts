// What every part checks, read from the database the service wrote: each acknowledged
// delivery became exactly one message, nothing is left unprocessed, every accepted reply
// ended sent or failed. And the report each part prints.
import type pg from 'pg';
import { one, say, waitUntil } from './service.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** What a part did and found; printed as it goes, summed up at the end. */
export class Report {
  readonly checks: Check[] = [];
  readonly figures: [string, string][] = [];

  constructor(readonly part: string) {}

  did(line: string): void {
    say(`  · ${line}`);
  }

  check(name: string, ok: boolean, detail: string): void {
    this.checks.push({ name, ok, detail });
    say(`  ${ok ? '✓' : '✗'} ${name}: ${detail}`);
  }

  figure(name: string, value: string | number): void {
    this.figures.push([name, String(value)]);
    say(`  = ${name}: ${value}`);
  }

  get ok(): boolean {
    return this.checks.length > 0 && this.checks.every((c) => c.ok);
  }
}

/** A fresh database on the suite's cluster for one part, so no part counts another's rows. */
export async function freshDatabase(pool: pg.Pool, adminUrl: string, name: string): Promise<string> {
  await pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await pool.query(`CREATE DATABASE ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Deliveries not processed yet, and webhook jobs not done. */
export async function backlog(db: pg.Pool): Promise<{ rows: number; jobs: number; replies: number }> {
  return one(
    db,
    `SELECT (SELECT count(*)::int FROM webhook_inbox WHERE status IN ('received', 'failed')) AS rows,
            (SELECT count(*)::int FROM pgboss.job WHERE name IN ('webhook-retry', 'send-message') AND state < 'completed') AS jobs,
            (SELECT count(*)::int FROM messages WHERE direction = 'outbound' AND status = 'queued') AS replies`,
  );
}

/** Waits until every stored delivery is processed and every reply settled. */
export async function drained(db: pg.Pool, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await waitUntil(
    'every delivery processed and every reply settled',
    async () => {
      const b = await backlog(db);
      return b.rows === 0 && b.jobs === 0 && b.replies === 0;
    },
    timeoutMs,
  );
  return (Date.now() - started) / 1000;
}

/** Each acknowledged provider message id is exactly one inbound message: none missing, none doubled. */
export async function checkExactlyOnce(report: Report, db: pg.Pool, acknowledged: Set<string>): Promise<void> {
  const { rows } = await db.query<{ external_id: string; n: number }>(
    `SELECT external_id, count(*)::int AS n FROM messages WHERE direction = 'inbound' GROUP BY external_id`,
  );
  const seen = new Map(rows.map((r) => [r.external_id, r.n]));
  let missing = 0;
  for (const id of acknowledged) if (!seen.has(id)) missing++;
  const doubled = rows.filter((r) => r.n > 1).length;
  const statuses = await db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_inbox GROUP BY status ORDER BY status`,
  );
  const byStatus = statuses.rows.map((r) => `${r.status} ${r.n}`).join(', ');
  report.check(
    'every acknowledged delivery is one message',
    missing === 0 && doubled === 0,
    `${acknowledged.size} acknowledged, ${missing} lost, ${doubled} doubled (${rows.length} inbound messages; inbox rows: ${byStatus})`,
  );
  report.check(
    'every stored delivery was processed',
    statuses.rows.every((r) => r.status === 'processed'),
    byStatus,
  );
}

/**
 * Every reply answered 202 ended `sent` or `failed`, and went to the provider once, except
 * when a process died holding it after the provider had answered (`killedAt`: the kill
 * times): such a reply's first send is before a kill, its second after.
 */
export async function checkReplies(
  report: Report,
  db: pg.Pool,
  accepted: Map<string, number>,
  sentAt: Map<string, number[]>,
  killedAt: number[] = [],
): Promise<void> {
  const ids = [...accepted.values()];
  const { rows } = await db.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM messages WHERE id = ANY($1::bigint[]) GROUP BY status`,
    [ids],
  );
  const settled = rows.filter((r) => r.status === 'sent' || r.status === 'failed').reduce((n, r) => n + r.n, 0);
  const found = rows.reduce((n, r) => n + r.n, 0);
  report.check(
    'every accepted reply ended sent or failed',
    settled === ids.length,
    `${ids.length} accepted: ${rows.map((r) => `${r.status} ${r.n}`).join(', ') || 'none'}${found < ids.length ? `, ${ids.length - found} missing` : ''}`,
  );
  let twice = 0;
  let unexplained = 0;
  let neverSent = 0;
  for (const text of accepted.keys()) {
    const times = sentAt.get(text) ?? [];
    if (times.length === 0) neverSent++;
    if (times.length < 2) continue;
    twice++;
    // Explained: a kill fell between the first send and the next one.
    const explained = times.slice(1).every((t, i) => killedAt.some((k) => k >= times[i]! && k <= t));
    if (!explained) unexplained++;
  }
  report.check(
    'a reply went out twice only across a kill',
    unexplained === 0 && neverSent === 0,
    `${accepted.size - twice - neverSent} sent once, ${twice} sent twice (${twice - unexplained} across a kill, ${unexplained} not), ${neverSent} never sent`,
  );
}

/** The inbox rows and reply messages still open right now (held by a process about to be, or just, killed). */
export async function openWork(db: pg.Pool): Promise<{ rows: string[]; replies: number[]; activeJobs: number }> {
  const rows = (await db.query<{ id: string }>(`SELECT id FROM webhook_inbox WHERE status IN ('received', 'failed')`)).rows.map(
    (r) => r.id,
  );
  const replies = (await db.query<{ id: number }>(`SELECT id FROM messages WHERE direction = 'outbound' AND status = 'queued'`)).rows.map(
    (r) => r.id,
  );
  const active = await one<{ n: number }>(
    db,
    `SELECT count(*)::int AS n FROM pgboss.job WHERE name IN ('webhook-retry', 'send-message') AND state = 'active'`,
  );
  return { rows, replies, activeJobs: active.n };
}

/** When the last of `rows` (inbox ids) and `replies` (message ids) was settled, epoch ms; null while any is open. */
export async function lastSettled(db: pg.Pool, rows: string[], replies: number[]): Promise<number | null> {
  const r = await one<{ open: number; last: Date | null }>(
    db,
    `SELECT (SELECT count(*)::int FROM webhook_inbox WHERE id = ANY($1::uuid[]) AND status IN ('received', 'failed'))
          + (SELECT count(*)::int FROM messages WHERE id = ANY($2::bigint[]) AND status = 'queued') AS open,
            GREATEST((SELECT max(processed_at) FROM webhook_inbox WHERE id = ANY($1::uuid[])),
                     (SELECT max(updated_at) FROM messages WHERE id = ANY($2::bigint[]))) AS last`,
    [rows, replies],
  );
  return r.open === 0 ? (r.last?.getTime() ?? 0) : null;
}
