import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread } from '../helpers/threads.js';

// Hourly buckets in zones whose offsets are not whole hours, across their DST changes
// (docs/reports.md). The figures are counted by hand from the instants seeded below.
const ctx = await useTestContext();
const db = ctx.deps.db;

let accounts = 0;

async function workspaceOpenedAt(instants: string[]) {
  const tenant = await makeTenant(ctx.deps);
  const ws = tenant.workspace.id;
  const connection = await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: `+49301${++accounts}` });
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: ws });
  await db
    .insertInto('conversations')
    .values(
      instants.map((at) => ({
        workspace_id: ws,
        thread_id: thread.id,
        connection_id: connection.id,
        opened_at: new Date(at),
        messages_in: 1,
        messages_out: 0,
        sla_breaches: 0,
        resolved_at: new Date(at),
        labels: [],
      })),
    )
    .execute();
  return tenant.headers;
}

async function hours(headers: Record<string, string>, date: string, zone: string) {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/v1/reports/timeseries?metric=conversations&interval=hour&from=${date}&to=${date}&timezone=${zone}`,
    headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  const data: { start: string; value: number }[] = res.json().data;
  return data;
}

/** The buckets that are not empty, as `start → value`. */
const filled = (series: { start: string; value: number }[]) =>
  Object.fromEntries(series.filter((b) => b.value !== 0).map((b) => [b.start, b.value]));

describe('GET /v1/reports/timeseries?interval=hour in zones with part-hour offsets', () => {
  it('keeps counting after Lord Howe moves its clocks 30 minutes forward and back', async () => {
    const headers = await workspaceOpenedAt([
      // 2026-10-04: at 02:00 (+10:30) = 15:30Z the clocks go to 02:30 (+11).
      '2026-10-03T14:50:00Z', // 01:20+10:30
      '2026-10-03T15:40:00Z', // 02:40+11, in the half-hour bucket
      '2026-10-03T16:05:00Z', // 03:05+11
      '2026-10-03T16:20:00Z', // 03:20+11
      '2026-10-04T12:59:00Z', // 23:59+11
      // 2026-04-05: at 02:00 (+11) = 15:00Z the clocks go back to 01:30 (+10:30).
      '2026-04-04T14:10:00Z', // 01:10+11
      '2026-04-04T15:10:00Z', // 01:40+10:30, the repeated half hour stays in hour 01
      '2026-04-04T15:35:00Z', // 02:05+10:30
      '2026-04-04T16:29:00Z', // 02:59+10:30
      '2026-04-04T16:31:00Z', // 03:01+10:30
      '2026-04-05T13:29:00Z', // 23:59+10:30
    ]);
    const spring = await hours(headers, '2026-10-04', 'Australia/Lord_Howe');
    expect(spring.map((b) => b.start.slice(11, 16))).toEqual([
      '00:00',
      '01:00',
      '02:30',
      ...Array.from({ length: 21 }, (_, i) => `${String(i + 3).padStart(2, '0')}:00`),
    ]);
    expect(filled(spring)).toEqual({
      '2026-10-04T01:00:00+10:30': 1,
      '2026-10-04T02:30:00+11:00': 1,
      '2026-10-04T03:00:00+11:00': 2,
      '2026-10-04T23:00:00+11:00': 1,
    });
    const autumn = await hours(headers, '2026-04-05', 'Australia/Lord_Howe');
    expect(autumn).toHaveLength(24);
    expect(filled(autumn)).toEqual({
      '2026-04-05T01:00:00+11:00': 2,
      '2026-04-05T02:00:00+10:30': 2,
      '2026-04-05T03:00:00+10:30': 1,
      '2026-04-05T23:00:00+10:30': 1,
    });
  });

  it('counts every hour of St John’s DST days and of Kathmandu’s +05:45', async () => {
    const headers = await workspaceOpenedAt([
      // St John's 2026-03-08: 02:00 (-03:30) = 05:30Z becomes 03:00 (-02:30).
      '2026-03-08T05:20:00Z', // 01:50-03:30
      '2026-03-08T05:40:00Z', // 03:10-02:30
      '2026-03-09T02:29:00Z', // 23:59-02:30
      // 2026-11-01: 02:00 (-02:30) = 04:30Z becomes 01:00 (-03:30): hour 01 twice.
      '2026-11-01T04:00:00Z', // 01:30-02:30
      '2026-11-01T04:45:00Z', // 01:15-03:30
      '2026-11-01T05:35:00Z', // 02:05-03:30
      // Kathmandu 2026-03-10 (+05:45).
      '2026-03-10T04:14:00Z', // 09:59
      '2026-03-10T04:20:00Z', // 10:05
    ]);
    const spring = await hours(headers, '2026-03-08', 'America/St_Johns');
    expect(spring).toHaveLength(23);
    expect(filled(spring)).toEqual({
      '2026-03-08T01:00:00-03:30': 1,
      '2026-03-08T03:00:00-02:30': 1,
      '2026-03-08T23:00:00-02:30': 1,
    });
    const autumn = await hours(headers, '2026-11-01', 'America/St_Johns');
    expect(autumn).toHaveLength(25);
    expect(filled(autumn)).toEqual({
      '2026-11-01T01:00:00-02:30': 1,
      '2026-11-01T01:00:00-03:30': 1,
      '2026-11-01T02:00:00-03:30': 1,
    });
    const kathmandu = await hours(headers, '2026-03-10', 'Asia/Kathmandu');
    expect(kathmandu).toHaveLength(24);
    expect(filled(kathmandu)).toEqual({ '2026-03-10T09:00:00+05:45': 1, '2026-03-10T10:00:00+05:45': 1 });
  });

  it('starts the days after Santiago skips midnight at midnight again', async () => {
    const headers = await workspaceOpenedAt([
      // 2026-09-06: 00:00 (-04:00) = 04:00Z becomes 01:00 (-03:00); the day starts at 01:00.
      '2026-09-06T04:30:00Z', // 01:30-03:00 on the 6th
      '2026-09-07T03:30:00Z', // 00:30-03:00 on the 7th
      '2026-09-08T02:59:00Z', // 23:59-03:00 on the 7th
    ]);
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/v1/reports/timeseries?metric=conversations&interval=day&from=2026-09-05&to=2026-09-08&timezone=America/Santiago',
      headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([
      { start: '2026-09-05T00:00:00-04:00', value: 0 },
      { start: '2026-09-06T01:00:00-03:00', value: 1 },
      { start: '2026-09-07T00:00:00-03:00', value: 2 },
      { start: '2026-09-08T00:00:00-03:00', value: 0 },
    ]);
    // A `to` date ends at the next midnight, not an hour into the next day.
    const sixth = await ctx.app.inject({
      method: 'GET',
      url: '/v1/reports/summary?from=2026-09-06&to=2026-09-06&timezone=America/Santiago',
      headers,
    });
    expect(sixth.statusCode, sixth.body).toBe(200);
    expect(sixth.json().data).toMatchObject({ to: '2026-09-07T03:00:00.000Z', groups: [{ conversations: 1 }] });
  });
});
