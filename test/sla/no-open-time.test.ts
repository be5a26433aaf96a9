import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SLA_CLOCK_QUEUE } from '../../src/sla/sla-clock.enqueue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { smsFromContact } from '../helpers/inbound.js';

// Business hours that hold too little open time within three years for a target (docs/sla.md):
// the clock has no due time, and the change that starts it goes through.
const now = new Date('2026-03-06T15:30:00Z'); // a Friday
const ctx = await useTestContext({ now: () => now });
const db = ctx.deps.db;

type Method = 'GET' | 'POST' | 'PATCH';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

let seq = 0;
async function workspace(businessHours: object) {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4931${++seq}` });
  const set = await call('PATCH', '/v1/workspace', tenant.headers, { businessHours });
  expect(set.statusCode, set.body).toBe(200);
  return { tenant, connection };
}

async function clockJobs(threadId: number) {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM pgboss.job WHERE name = ${SLA_CLOCK_QUEUE} AND (data->>'threadId')::bigint = ${threadId}`.execute(db);
  return rows;
}

/** Every Monday from 2026-03-09 for four years. */
const MONDAYS = Array.from({ length: 4 * 53 }, (_, i) =>
  new Date(Date.parse('2026-03-09T00:00:00Z') + i * 7 * 86_400_000).toISOString().slice(0, 10),
);

describe('SLA clocks on business hours without enough open time', () => {
  it('opens a thread from an inbound message with no due time when a target outlasts three years of open time', async () => {
    // One open minute a week: a business day of target is 1,440 weeks away.
    const { tenant, connection } = await workspace({ timezone: 'Europe/Berlin', weekly: { mon: [['09:00', '09:01']] } });
    const policy = await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'Hours',
      firstResponse: 'PT30S',
      resolution: 'P1D',
      businessHoursOnly: true,
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const id = await smsFromContact(ctx, connection, '+15550000001');
    const thread = (await call('GET', `/v1/threads/${id}`, tenant.headers)).json().data;
    expect(thread.sla).toEqual({
      policyId: policy.json().data.id,
      firstResponseDueAt: '2026-03-09T08:00:30.000Z',
      nextResponseDueAt: null,
      resolutionDueAt: null,
      status: 'ok',
      breaches: [],
    });
    expect(await clockJobs(id)).toHaveLength(2);
  });

  it('lets a priority change apply a policy on hours closed by holidays for years, and the thread resolve', async () => {
    const { tenant, connection } = await workspace({ timezone: 'Europe/Berlin', weekly: { mon: [['09:00', '17:00']] }, holidays: MONDAYS });
    const policy = await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'Urgent',
      firstResponse: 'PT1H',
      businessHoursOnly: true,
      conditions: { priorities: ['urgent'] },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const id = await smsFromContact(ctx, connection, '+15550000002');
    const urgent = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { priority: 'urgent' });
    expect(urgent.statusCode, urgent.body).toBe(200);
    expect(urgent.json().data.sla).toMatchObject({ policyId: policy.json().data.id, firstResponseDueAt: null, status: 'ok' });
    expect(await clockJobs(id)).toHaveLength(0);
    const done = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' });
    expect(done.statusCode, done.body).toBe(200);
  });
});
