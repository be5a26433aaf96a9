import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { seedThread } from '../helpers/threads.js';

// The routes' figures against a reference worked out here, in plain TypeScript, from the seeded
// history (docs/reports.md). The history is seeded as recorded conversations: how they come to
// be recorded is test/reports/recording.test.ts.
const ctx = await useTestContext();
const db = ctx.deps.db;
const get = (url: string, headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url, headers });

/** A small deterministic generator (mulberry32), so a failure replays. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Seeded {
  threadId: number;
  connectionId: number;
  openedAt: Date;
  firstResponseAt: Date | null;
  firstResponseSeconds: number | null;
  resolvedAt: Date | null;
  resolutionSeconds: number | null;
  /** At resolution, or the thread's own while open. */
  agent: number | null;
  team: number | null;
  labels: string[];
  messagesIn: number;
  messagesOut: number;
  slaBreaches: number;
  csatRating: number | null;
  csatAt: Date | null;
  csatComment: string | null;
}

const START = Date.parse('2026-03-01T00:00:00Z');
const HOUR = 3_600_000;

const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const connections = [
  await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+4930100', name: 'Berlin' }),
  await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+4930200', name: 'Hamburg' }),
];
const agents = [
  (await makeUser(ctx.deps, ws, { roles: ['agent'], name: 'Ada' })).user.id,
  (await makeUser(ctx.deps, ws, { roles: ['agent'], name: 'Bo' })).user.id,
];
const teams = (
  await db
    .insertInto('teams')
    .values([
      { workspace_id: ws, name: 'Sales' },
      { workspace_id: ws, name: 'Support' },
    ])
    .returning('id')
    .execute()
).map((t) => t.id);
const LABELS = ['billing', 'bug', 'vip'];

/** Threads with conversations one after another over three weeks; the last of some still open. */
async function seedHistory(): Promise<Seeded[]> {
  const rnd = random(37);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const out: Seeded[] = [];
  for (let i = 0; i < 40; i++) {
    const connection = connections[i % 2]!;
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: ws });
    let at = START + Math.floor(rnd() * 48 * HOUR);
    const n = 1 + Math.floor(rnd() * 5);
    for (let k = 0; k < n; k++) {
      const openedAt = new Date(at);
      const answered = rnd() < 0.8;
      const frSeconds = answered ? 30 + Math.floor(rnd() * 20_000) : null;
      const open = k === n - 1 && rnd() < 0.4;
      const resSeconds = open ? null : (frSeconds ?? 0) + 60 + Math.floor(rnd() * 90_000);
      const rated = !open && rnd() < 0.5;
      const c: Seeded = {
        threadId: thread.id,
        connectionId: connection.id,
        openedAt,
        firstResponseAt: frSeconds === null ? null : new Date(at + frSeconds * 1000),
        firstResponseSeconds: frSeconds,
        resolvedAt: resSeconds === null ? null : new Date(at + resSeconds * 1000),
        resolutionSeconds: resSeconds,
        agent: rnd() < 0.2 ? null : pick(agents),
        team: rnd() < 0.3 ? null : pick(teams),
        labels: LABELS.filter(() => rnd() < 0.35),
        messagesIn: 1 + Math.floor(rnd() * 9),
        messagesOut: Math.floor(rnd() * 6),
        slaBreaches: open ? 0 : Math.floor(rnd() * 3),
        csatRating: rated ? 1 + Math.floor(rnd() * 5) : null,
        csatAt: rated ? new Date(at + (resSeconds! + 600) * 1000) : null,
        csatComment: rated ? pick(['fine', 'Quick, "friendly", thanks', 'slow\r\nvery slow', '=1+1']) : null,
      };
      out.push(c);
      if (open) {
        // An open conversation is read with its thread's current assignee, team, labels and counts.
        await db
          .updateTable('threads')
          .set({
            assignee_id: c.agent,
            team_id: c.team,
            labels: c.labels,
            conversation_messages_in: c.messagesIn,
            conversation_messages_out: c.messagesOut,
          })
          .where('id', '=', thread.id)
          .execute();
      }
      at = (c.csatAt ?? c.resolvedAt ?? openedAt).getTime() + Math.floor(rnd() * 30 * HOUR);
    }
  }
  const rows = out.map((c) => ({
    workspace_id: ws,
    thread_id: c.threadId,
    connection_id: c.connectionId,
    opened_at: c.openedAt,
    first_response_at: c.firstResponseAt,
    first_response_seconds: c.firstResponseSeconds,
    first_response_business_seconds: c.firstResponseSeconds === null ? null : Math.floor(c.firstResponseSeconds / 3),
    resolved_at: c.resolvedAt,
    resolution_seconds: c.resolutionSeconds,
    resolution_business_seconds: c.resolutionSeconds === null ? null : Math.floor(c.resolutionSeconds / 3),
    assignee_id: c.resolvedAt ? c.agent : null,
    team_id: c.resolvedAt ? c.team : null,
    labels: c.resolvedAt ? c.labels : [],
    messages_in: c.resolvedAt ? c.messagesIn : null,
    messages_out: c.resolvedAt ? c.messagesOut : null,
    sla_breaches: c.slaBreaches,
    csat_token_hash: null,
    csat_sent_at: null,
    csat_rating: c.csatRating,
    csat_comment: c.csatComment,
    csat_at: c.csatAt,
  }));
  await db.deleteFrom('conversations').where('workspace_id', '=', ws).execute();
  await db.insertInto('conversations').values(rows).execute();
  return out;
}

const history = await seedHistory();

/** The p-th percentile with linear interpolation between the closest ranks (SQL's percentile_cont). */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  const pos = p * (v.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo]! + (v[hi]! - v[lo]!) * (pos - lo);
}
const average = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);
const stats = (values: number[]) => ({ median: percentile(values, 0.5), p90: percentile(values, 0.9), average: average(values) });

function reference(from: Date, to: Date, keyOf: (c: Seeded) => (string | number | null)[]) {
  const inRange = (d: Date | null) => d !== null && d >= from && d < to;
  const groups = new Map<string | number | null, Seeded[]>();
  for (const c of history) {
    if (!(inRange(c.openedAt) || inRange(c.firstResponseAt) || inRange(c.resolvedAt) || inRange(c.csatAt))) continue;
    for (const k of keyOf(c)) groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const result = new Map<string | number | null, unknown>();
  for (const [k, cs] of groups) {
    const opened = cs.filter((c) => inRange(c.openedAt));
    const answered = cs.filter((c) => inRange(c.firstResponseAt));
    const resolved = cs.filter((c) => inRange(c.resolvedAt));
    const rated = cs.filter((c) => inRange(c.csatAt));
    const fr = answered.map((c) => c.firstResponseSeconds!);
    const res = resolved.map((c) => c.resolutionSeconds!);
    result.set(k, {
      conversations: opened.length,
      resolved: resolved.length,
      firstResponseSeconds: stats(fr),
      resolutionSeconds: stats(res),
      business: {
        firstResponseSeconds: stats(fr.map((s) => Math.floor(s / 3))),
        resolutionSeconds: stats(res.map((s) => Math.floor(s / 3))),
      },
      messagesIn: opened.reduce((a, c) => a + c.messagesIn, 0),
      messagesOut: opened.reduce((a, c) => a + c.messagesOut, 0),
      slaBreaches: resolved.reduce((a, c) => a + c.slaBreaches, 0),
      csat: {
        responses: rated.length,
        average: average(rated.map((c) => c.csatRating!)),
        satisfiedShare: rated.length === 0 ? null : rated.filter((c) => c.csatRating! >= 4).length / rated.length,
      },
    });
  }
  return result;
}

/** Numbers equal to 9 significant digits (the database's floating point is not this one's). */
function close(actual: unknown, expected: unknown, path = ''): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(Math.abs((actual as number) - expected), `${path}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
      Math.abs(expected) * 1e-9 + 1e-9,
    );
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) close((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else expect(actual, path).toEqual(expected);
}

const KEYS: Record<string, (c: Seeded) => (string | number | null)[]> = {
  none: () => [null],
  agent: (c) => [c.agent],
  team: (c) => [c.team],
  connection: (c) => [c.connectionId],
  label: (c) => (c.labels.length === 0 ? [null] : c.labels),
};

describe('GET /v1/reports/summary', () => {
  it.each(Object.keys(KEYS))('equals the reference grouped by %s', async (groupBy) => {
    for (const [from, to] of [
      ['2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'],
      ['2026-03-03T06:00:00Z', '2026-03-07T18:30:00Z'],
    ] as const) {
      const res = await get(`/v1/reports/summary?from=${from}&to=${to}&groupBy=${groupBy}`, tenant.headers);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json().data;
      expect(body).toMatchObject({ from: new Date(from).toISOString(), to: new Date(to).toISOString(), timezone: 'UTC', groupBy });
      const expected = reference(new Date(from), new Date(to), KEYS[groupBy]!);
      const actual = new Map(body.groups.map((g: { group: { id: unknown } | null }) => [g.group === null ? null : g.group.id, g]));
      expect([...actual.keys()].sort(), 'groups').toEqual([...expected.keys()].sort());
      for (const [k, v] of expected) {
        const { group, ...figures } = actual.get(k) as Record<string, unknown>;
        close(figures, v, `${groupBy}=${k}`);
      }
    }
  });

  it('answers null medians, p90 and averages for a group that has openings but no durations in the range', async () => {
    // A second from an opening: nothing is answered or resolved in it.
    const c = history.find((h) => h.firstResponseAt !== null)!;
    const [from, to] = [c.openedAt, new Date(c.openedAt.getTime() + 1000)];
    for (const groupBy of ['none', 'agent'] as const) {
      const res = await get(`/v1/reports/summary?from=${from.toISOString()}&to=${to.toISOString()}&groupBy=${groupBy}`, tenant.headers);
      expect(res.statusCode, res.body).toBe(200);
      const [group, ...others] = res.json().data.groups;
      expect(others).toEqual([]);
      const none = { median: null, p90: null, average: null };
      expect(group).toMatchObject({ conversations: 1, firstResponseSeconds: none, resolutionSeconds: none });
      expect(group.business).toEqual({ firstResponseSeconds: none, resolutionSeconds: none });
      const { group: _, ...figures } = group;
      close(figures, reference(from, to, KEYS[groupBy]!).values().next().value, groupBy);
    }
  });

  it('names the groups, reads dates as whole days in the zone, and refuses what it cannot read', async () => {
    const agents = (await get('/v1/reports/summary?from=2026-03-01&to=2026-03-31&groupBy=agent', tenant.headers)).json().data;
    expect(agents.groups.map((g: { group: unknown }) => g.group)).toContainEqual({ id: expect.any(Number), name: 'Ada' });
    const teamsAnswer = (await get('/v1/reports/summary?from=2026-03-01&to=2026-03-31&groupBy=team', tenant.headers)).json().data;
    expect(teamsAnswer.groups.map((g: { group: { name: string } }) => g.group.name)).toContain('Support');

    const tokyo = (await get('/v1/reports/summary?from=2026-03-02&to=2026-03-02&timezone=Asia/Tokyo', tenant.headers)).json().data;
    expect([tokyo.from, tokyo.to]).toEqual(['2026-03-01T15:00:00.000Z', '2026-03-02T15:00:00.000Z']);
    close(tokyo.groups[0], { group: null, ...(reference(new Date(tokyo.from), new Date(tokyo.to), KEYS.none!).get(null) as object) });

    const empty = (await get('/v1/reports/summary?from=2020-01-01&to=2020-01-02', tenant.headers)).json().data;
    expect(empty.groups).toEqual([
      expect.objectContaining({ group: null, conversations: 0, csat: { responses: 0, average: null, satisfiedShare: null } }),
    ]);

    for (const [query, field] of [
      ['from=2026-03-01&to=2026-03-02&timezone=Mars/Olympus', 'timezone'],
      ['from=2026-03-02&to=2026-03-01', 'to'],
      ['from=2026-03-01T00:00:00&to=2026-03-02', 'from'],
      ['from=2024-01-01&to=2026-03-02', 'to'],
      ['from=2026-02-30&to=2026-03-02', 'from'],
    ]) {
      const res = await get(`/v1/reports/summary?${query}`, tenant.headers);
      expect(res.statusCode, query).toBe(422);
      expect(res.json().error.message, query).toMatch(new RegExp(`^${field}`));
    }
    expect((await get('/v1/reports/summary?from=2026-03-01&to=2026-03-02&groupBy=moon', tenant.headers)).statusCode).toBeGreaterThanOrEqual(
      400,
    );
    expect((await get('/v1/reports/summary?to=2026-03-02', tenant.headers)).statusCode).toBeLessThan(500);
    const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
    expect((await get('/v1/reports/summary?from=2026-03-01&to=2026-03-02', writer.headers)).statusCode).toBe(403);
    expect((await get('/v1/reports/conversations.csv?from=2026-03-01&to=2026-03-02', writer.headers)).statusCode).toBe(403);
  });
});

/** The local calendar date and hour of an instant in a zone, without the service's date library. */
function local(at: Date, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour) };
}

describe('GET /v1/reports/timeseries', () => {
  const zone = 'America/New_York'; // DST starts on 2026-03-08
  const METRIC_OF: Record<string, { at: (c: Seeded) => Date | null; value: (cs: Seeded[]) => number | null; empty: 0 | null }> = {
    conversations: { at: (c) => c.openedAt, value: (cs) => cs.length, empty: 0 },
    resolved: { at: (c) => c.resolvedAt, value: (cs) => cs.length, empty: 0 },
    firstResponseMedian: {
      at: (c) => c.firstResponseAt,
      value: (cs) =>
        percentile(
          cs.map((c) => c.firstResponseSeconds!),
          0.5,
        ),
      empty: null,
    },
    resolutionMedian: {
      at: (c) => c.resolvedAt,
      value: (cs) =>
        percentile(
          cs.map((c) => c.resolutionSeconds!),
          0.5,
        ),
      empty: null,
    },
    messagesIn: { at: (c) => c.openedAt, value: (cs) => cs.reduce((a, c) => a + c.messagesIn, 0), empty: 0 },
    csatAverage: { at: (c) => c.csatAt, value: (cs) => average(cs.map((c) => c.csatRating!)), empty: null },
  };

  it.each(Object.keys(METRIC_OF))('has every local day of the range for %s, each equal to the reference', async (metric) => {
    const res = await get(
      `/v1/reports/timeseries?metric=${metric}&interval=day&from=2026-03-01&to=2026-03-21&timezone=${zone}`,
      tenant.headers,
    );
    expect(res.statusCode, res.body).toBe(200);
    const series: { start: string; value: number | null }[] = res.json().data;
    const days = Array.from({ length: 21 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`);
    expect(series.map((b) => local(new Date(b.start), zone))).toEqual(days.map((date) => ({ date, hour: 0 })));
    const m = METRIC_OF[metric]!;
    for (const [i, date] of days.entries()) {
      const cs = history.filter((c) => {
        const at = m.at(c);
        return at !== null && local(at, zone).date === date;
      });
      const expected = cs.length === 0 ? m.empty : m.value(cs);
      if (expected === null) expect(series[i]!.value, date).toBeNull();
      else close(series[i]!.value, expected, `${metric} ${date}`);
    }
  });

  it('has 23 hours on the day clocks go forward and weeks from Monday', async () => {
    const hours = (
      await get(`/v1/reports/timeseries?metric=conversations&interval=hour&from=2026-03-08&to=2026-03-08&timezone=${zone}`, tenant.headers)
    ).json().data;
    expect(hours).toHaveLength(23);
    expect(hours.map((b: { start: string }) => local(new Date(b.start), zone).hour)).toEqual([
      0,
      1,
      ...Array.from({ length: 21 }, (_, i) => i + 3),
    ]);
    const expected = hours.map(
      (b: { start: string }) =>
        history.filter((c) => c.openedAt.getTime() >= Date.parse(b.start) && c.openedAt.getTime() < Date.parse(b.start) + HOUR).length,
    );
    expect(hours.map((b: { value: number }) => b.value)).toEqual(expected);

    const weeks = (
      await get(`/v1/reports/timeseries?metric=resolved&interval=week&from=2026-03-04&to=2026-03-20&timezone=${zone}`, tenant.headers)
    ).json().data;
    expect(weeks.map((b: { start: string }) => local(new Date(b.start), zone))).toEqual([
      { date: '2026-03-02', hour: 0 },
      { date: '2026-03-09', hour: 0 },
      { date: '2026-03-16', hour: 0 },
    ]);
    const from = new Date(`2026-03-04T05:00:00Z`);
    const to = new Date(`2026-03-21T04:00:00Z`);
    expect(weeks.reduce((a: number, b: { value: number }) => a + b.value, 0)).toBe(
      history.filter((c) => c.resolvedAt && c.resolvedAt >= from && c.resolvedAt < to).length,
    );
    const tooMany = await get('/v1/reports/timeseries?metric=resolved&interval=hour&from=2025-03-01&to=2026-03-01', tenant.headers);
    expect(tooMany.statusCode).toBe(200);
    expect(tooMany.json().data).toHaveLength(365 * 24 + 24);
    expect((await get('/v1/reports/timeseries?metric=nothing&from=2026-03-01&to=2026-03-02', tenant.headers)).statusCode).toBeLessThan(500);
  });
});

/** RFC 4180, as a spreadsheet reads it: quoted fields may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field, 'the text ends with CRLF').toBe('');
  return rows;
}

describe('GET /v1/reports/conversations.csv', () => {
  it('is one row per conversation opened in the range, header first, quoted as RFC 4180 says', async () => {
    const res = await get('/v1/reports/conversations.csv?from=2026-03-01&to=2026-03-31', tenant.headers);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="conversations.csv"');
    const [header, ...rows] = parseCsv(res.body);
    expect(header).toEqual(expect.arrayContaining(['conversationId', 'openedAt', 'firstResponseSeconds', 'csatRating', 'csatComment']));
    const col = (name: string) => header!.indexOf(name);
    const expected = history.filter((c) => c.openedAt < new Date('2026-04-01T00:00:00Z'));
    expect(rows).toHaveLength(expected.length);
    const byOpening = (a: Seeded, b: Seeded) => a.openedAt.getTime() - b.openedAt.getTime();
    const seen = rows.map((r) => ({
      openedAt: String(r[col('openedAt')]),
      thread: Number(r[col('threadId')]),
      messagesIn: Number(r[col('messagesIn')]),
      labels: r[col('labels')],
      agent: r[col('assigneeId')] === '' ? null : Number(r[col('assigneeId')]),
      comment: r[col('csatComment')] === '' ? null : r[col('csatComment')],
    }));
    const want = [...expected].sort(byOpening).map((c) => ({
      openedAt: c.openedAt.toISOString(),
      thread: c.threadId,
      messagesIn: c.messagesIn,
      labels: c.labels.join(' '),
      agent: c.agent,
      comment: c.csatComment,
    }));
    expect(seen.sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.thread - b.thread)).toEqual(
      want.sort((a, b) => a.openedAt.localeCompare(b.openedAt) || a.thread - b.thread),
    );
    expect(res.body).toContain('"Quick, ""friendly"", thanks"');
  });

  it('streams 200,000 rows under a fixed memory bound', async () => {
    const big = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, big.workspace.id, { integrationKey: 'sms', externalAccountId: '+4930999' });
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: big.workspace.id });
    // Rows of ~500 bytes: the whole CSV is about 100 MB, far above the bound.
    for (let first = 1; first <= 200_000; first += 25_000)
      await sql`
        INSERT INTO conversations (workspace_id, thread_id, connection_id, opened_at, resolved_at, resolution_seconds, messages_in, messages_out, csat_rating, csat_comment, csat_at)
        SELECT ${big.workspace.id}, ${thread.id}, ${connection.id}, timestamptz '2026-01-01' + i * interval '1 minute',
          timestamptz '2026-01-01' + i * interval '1 minute' + interval '1 hour', 3600, 3, 2, 5, repeat('all good, ', 40) || i, timestamptz '2026-06-01'
        FROM generate_series(${first}::int, ${first + 24_999}::int) AS i`.execute(db);
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    // Memory is read after a full collection, every 8 MB received: what stays is what the
    // stream holds, not garbage a lazy collector has not freed yet.
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const before = process.memoryUsage().rss;
    let peak = before;
    const res = await fetch(`${base}/v1/reports/conversations.csv?from=2025-12-31&to=2026-12-31`, { headers: big.headers });
    expect(res.status).toBe(200);
    let bytes = 0;
    let lines = 0;
    let sampledAt = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      if (bytes - sampledAt >= 8_000_000) {
        sampledAt = bytes;
        gc();
        peak = Math.max(peak, process.memoryUsage().rss);
      }
    }
    expect(lines).toBe(200_001);
    expect(bytes).toBeGreaterThan(90_000_000);
    expect(peak - before, `RSS grew by ${Math.round((peak - before) / 1e6)} MB`).toBeLessThan(48_000_000);
  }, 60_000);
});
