// Phase `--reports`: the reports of a busy year. Seeds --threads threads and --messages messages
// (as the conversations phase does), then one recorded conversation per thread over the last
// year (opened, answered, most resolved, a third rated), ANALYZEs, and times over HTTP, one
// request at a time with an admin's JWT, `GET /v1/reports/summary` (a year and a month; by none,
// agent and label) and `GET /v1/reports/timeseries` (a year by day and week, a month by hour).
// Goal: p95 ≤ 300 ms each (docs/reports.md). Then the summary's statement alone on one
// connection, with the CPU time its Postgres backend spent on it: the machine's load stretches
// the wall time, not this, so it compares builds measured at different times.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/db/database.js';
import { type GroupBy, type Range, summaryRows } from '../../src/reports/reports.queries.js';
import { createUser } from '../../src/users/users.service.js';
import { say, serve } from './common.js';
import { type Timed, time } from './conversations.js';
import { seedConversations } from './conversations.queries.js';
import { processCpuMs } from './cpu.js';
import type { BenchOptions } from './options.js';

export async function measureReports(options: BenchOptions, databaseUrl: string, db: Db, workspaceId: number, connectionId: number) {
  const password = randomBytes(12).toString('hex');
  const admin = await createUser(db, workspaceId, {
    name: 'Admin',
    email: `admin-${randomBytes(3).toString('hex')}@bench.test`,
    password,
    roles: ['admin'],
  });
  const agents = [];
  for (let i = 0; i < 10; i++)
    agents.push(
      await createUser(db, workspaceId, {
        name: `Agent ${i}`,
        email: `agent-${i}-${randomBytes(3).toString('hex')}@bench.test`,
        password,
        roles: ['agent'],
      }),
    );
  const seeding = createDatabase(databaseUrl, { max: 1, statementTimeoutMillis: 0 });
  let seconds: number;
  try {
    say(`reports: seeding ${options.threads} threads and ${options.messages} messages`);
    const seeded = await seedConversations(
      seeding.db,
      workspaceId,
      connectionId,
      agents.map((a) => a.id),
      options.threads,
      options.messages,
    );
    const started = performance.now();
    await sql`
      INSERT INTO conversations (workspace_id, thread_id, connection_id, opened_at, first_response_at, first_response_seconds,
        first_response_business_seconds, resolved_at, resolution_seconds, resolution_business_seconds, assignee_id, labels,
        messages_in, messages_out, sla_breaches, csat_rating, csat_at)
      SELECT t.workspace_id, t.id, t.connection_id, o.at, o.at + o.fr * interval '1 second', o.fr, o.fr / 3,
        CASE WHEN t.status = 'resolved' THEN o.at + o.res * interval '1 second' END,
        CASE WHEN t.status = 'resolved' THEN o.res END, CASE WHEN t.status = 'resolved' THEN o.res / 3 END,
        CASE WHEN t.status = 'resolved' THEN t.assignee_id END, CASE WHEN t.status = 'resolved' THEN t.labels ELSE '{}' END,
        CASE WHEN t.status = 'resolved' THEN 10 END, CASE WHEN t.status = 'resolved' THEN 5 END, (t.id % 3)::int,
        CASE WHEN t.status = 'resolved' AND t.id % 3 = 0 THEN 1 + (t.id % 5)::int END,
        CASE WHEN t.status = 'resolved' AND t.id % 3 = 0 THEN o.at + (o.res + 600) * interval '1 second' END
      FROM threads t
      CROSS JOIN LATERAL (SELECT t.last_message_at - interval '2 days' AS at, 60 + abs(hashint8(t.id)) % 20000 AS fr,
                                 20060 + abs(hashint8(t.id * 3)) % 150000 AS res) o
      WHERE t.workspace_id = ${workspaceId}`.execute(seeding.db);
    await sql`VACUUM ANALYZE`.execute(seeding.db);
    seconds = Math.round(seeded.seconds + (performance.now() - started) / 1000);
  } finally {
    await seeding.close();
  }
  const { n } = await db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  say(`reports: ${n} conversations seeded in ${seconds} s`);

  const api = await serve(options, 'api', databaseUrl);
  try {
    const login = await fetch(`${api.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: admin.email, password }),
    });
    const headers = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
    const to = new Date();
    const year = `from=${new Date(to.getTime() - 365 * 86_400_000).toISOString()}&to=${to.toISOString()}&timezone=Europe/Berlin`;
    const month = `from=${new Date(to.getTime() - 30 * 86_400_000).toISOString()}&to=${to.toISOString()}&timezone=Europe/Berlin`;
    const reads: [string, string][] = [
      ['summary, a year', `summary?${year}`],
      ['summary, a year by agent', `summary?${year}&groupBy=agent`],
      ['summary, a year by label', `summary?${year}&groupBy=label`],
      ['summary, a month by agent', `summary?${month}&groupBy=agent`],
      ['timeseries conversations, a year by day', `timeseries?metric=conversations&interval=day&${year}`],
      ['timeseries firstResponseMedian, a year by week', `timeseries?metric=firstResponseMedian&interval=week&${year}`],
      ['timeseries messagesIn, a month by hour', `timeseries?metric=messagesIn&interval=hour&${month}`],
    ];
    const timed: Timed[] = [];
    for (const [what, path] of reads) timed.push(await time(what, `${api.url}/v1/reports/${path}`, headers, options.samples));
    const ranges: [string, Range, GroupBy][] = [
      ['summary, a year', { workspaceId, from: new Date(to.getTime() - 365 * 86_400_000), to }, 'none'],
      ['summary, a year by agent', { workspaceId, from: new Date(to.getTime() - 365 * 86_400_000), to }, 'agent'],
      ['summary, a year by label', { workspaceId, from: new Date(to.getTime() - 365 * 86_400_000), to }, 'label'],
      ['summary, a month by agent', { workspaceId, from: new Date(to.getTime() - 30 * 86_400_000), to }, 'agent'],
    ];
    const cpu = await statementCpu(databaseUrl, ranges, Math.min(options.samples, 20));
    return { conversations: Number(n), messages: options.messages, seconds, timed, cpu };
  } finally {
    await api.stop();
  }
}

/**
 * Postgres CPU milliseconds per summary statement, from its backend's /proc entry (so only where
 * Postgres runs on this machine; null elsewhere).
 */
async function statementCpu(databaseUrl: string, ranges: [string, Range, GroupBy][], samples: number) {
  const one = createDatabase(databaseUrl, { max: 1, statementTimeoutMillis: 0 });
  try {
    return await one.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
      const pid = rows[0]!.pid;
      const out: { what: string; postgresCpuMs: number | null }[] = [];
      for (const [what, range, groupBy] of ranges) {
        for (let i = 0; i < 3; i++) await summaryRows(trx, range, groupBy);
        const before = processCpuMs(pid);
        for (let i = 0; i < samples; i++) await summaryRows(trx, range, groupBy);
        const spent = processCpuMs(pid) - before;
        out.push({ what, postgresCpuMs: before === 0 ? null : Math.round(spent / samples) });
      }
      return out;
    });
  } finally {
    await one.close();
  }
}
