import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/channels/index.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { SLA_CLOCK_QUEUE, type SlaClockJob } from '../../src/sla/sla-clock.enqueue.js';
import { tellSlaMoment } from '../../src/sla/sla-clock.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { BERLIN_9_TO_5, smsFromContact } from '../helpers/inbound.js';
import { makeWidget, startVisitor, visitorSays } from '../helpers/livechat.js';
import { fixture } from '../helpers/webhooks.js';

// The clock is the service's injected one: tests move it instead of waiting. (So callers are
// API keys: a JWT signed at the test's clock would be judged by the real one.)
let now = new Date('2026-03-06T15:30:00Z'); // a Friday, 16:30 in Berlin
const ctx = await useTestContext({ now: () => now, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = ctx.deps.db;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

let seq = 0;
async function workspace() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4930${++seq}` });
  // Every event the workspace's endpoints would receive is written to webhook_events.
  const hook = await call('POST', '/v1/webhook-endpoints', tenant.headers, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  expect(hook.statusCode, hook.body).toBe(201);
  return { tenant, connection };
}

/** A contact writes, applied as the worker applies a delivery at the test's clock; answers the thread. */
const contactWrites = (connection: { externalAccountId: string }, from: string, text = 'hello') =>
  smsFromContact(ctx, connection, from, { text });

const thread = async (headers: Record<string, string>, id: number) => (await call('GET', `/v1/threads/${id}`, headers)).json().data;

async function clockJobs(threadId: number) {
  const { rows } = await sql<{ data: SlaClockJob; start_after: Date }>`
    SELECT data, start_after FROM pgboss.job WHERE name = ${SLA_CLOCK_QUEUE} AND (data->>'threadId')::bigint = ${threadId}
    ORDER BY start_after, data->>'kind' DESC`.execute(db);
  return rows;
}

const notificationsOf = (userId: number) =>
  db.selectFrom('notifications').select(['type', 'thread_id']).where('user_id', '=', userId).orderBy('id').execute();

/** A policy for urgent threads with these targets, before a standard one that times resolution only. */
async function urgentOverStandard(headers: Record<string, string>, targets: Record<string, string>) {
  const urgent = await call('POST', '/v1/sla-policies', headers, {
    name: 'Urgent',
    position: 1,
    ...targets,
    conditions: { priorities: ['urgent'] },
  });
  await call('POST', '/v1/sla-policies', headers, { name: 'Standard', position: 2, resolution: 'P1D' });
  return urgent.json().data;
}

const reply = async (headers: Record<string, string>, threadId: number) =>
  expect((await call('POST', `/v1/threads/${threadId}/messages`, headers, { text: 'On it.' })).statusCode).toBe(202);

const outboundEvents = async (workspaceId: number, type: string) =>
  (await db.selectFrom('webhook_events').select('body').where('workspace_id', '=', workspaceId).where('type', '=', type).execute()).map(
    (r) => JSON.parse(r.body as unknown as string).data,
  );

describe('/v1/sla-policies', () => {
  it('lets admins create, list by position, change and delete policies; others get 403', async () => {
    const { tenant } = await workspace();
    const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
    expect((await call('GET', '/v1/sla-policies', writer.headers)).statusCode).toBe(403);
    expect((await call('POST', '/v1/sla-policies', writer.headers, { name: 'x', firstResponse: 'PT1H' })).statusCode).toBe(403);

    const late = await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Standard', position: 5, firstResponse: 'PT4H' });
    expect(late.statusCode, late.body).toBe(201);
    expect(late.json().data).toEqual({
      id: expect.any(Number),
      name: 'Standard',
      position: 5,
      enabled: true,
      firstResponse: 'PT4H',
      nextResponse: null,
      resolution: null,
      businessHoursOnly: false,
      conditions: {},
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const early = await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'VIP',
      position: 1,
      resolution: 'P1D',
      conditions: { priorities: ['urgent'], labels: ['VIP'] },
    });
    expect(early.json().data.conditions).toEqual({ priorities: ['urgent'], labels: ['vip'] });
    const list = (await call('GET', '/v1/sla-policies', tenant.headers)).json().data;
    expect(list.map((p: { name: string }) => p.name)).toEqual(['VIP', 'Standard']);

    const changed = await call('PATCH', `/v1/sla-policies/${late.json().data.id}`, tenant.headers, {
      enabled: false,
      nextResponse: 'PT30M',
    });
    expect(changed.json().data).toMatchObject({ enabled: false, firstResponse: 'PT4H', nextResponse: 'PT30M' });
    expect((await call('DELETE', `/v1/sla-policies/${late.json().data.id}`, tenant.headers)).statusCode).toBe(200);
    expect((await call('PATCH', `/v1/sla-policies/${late.json().data.id}`, tenant.headers, { name: 'y' })).statusCode).toBe(404);
    // Another workspace sees none of them.
    const other = await makeTenant(ctx.deps);
    expect((await call('GET', '/v1/sla-policies', other.headers)).json().data).toEqual([]);
    expect((await call('DELETE', `/v1/sla-policies/${early.json().data.id}`, other.headers)).statusCode).toBe(404);
  });

  it('refuses targets under PT10S, months, no target and unknown teams or connections with 422, writing nothing', async () => {
    const { tenant } = await workspace();
    const other = await workspace();
    const gone = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4930${++seq}` });
    expect((await call('DELETE', `/v1/connections/${gone.id}`, tenant.headers)).statusCode).toBe(200);
    for (const [payload, field] of [
      [{ name: 'a', firstResponse: 'PT9S' }, 'firstResponse'],
      [{ name: 'a', resolution: 'P1M' }, 'resolution'],
      [{ name: 'a', nextResponse: 'an hour' }, 'nextResponse'],
      [{ name: 'a' }, 'at least one target'],
      [{ name: 'a', firstResponse: 'PT1H', conditions: { teamIds: [999999] } }, 'conditions.teamIds'],
      [{ name: 'a', firstResponse: 'PT1H', conditions: { connectionIds: [other.connection.id] } }, 'conditions.connectionIds'],
      [{ name: 'a', firstResponse: 'PT1H', conditions: { connectionIds: [gone.id] } }, 'conditions.connectionIds'],
      [{ name: 'a', firstResponse: 'PT1H', conditions: { priorities: ['soon'] } }, 'priorities'],
    ] as const) {
      const res = await call('POST', '/v1/sla-policies', tenant.headers, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().error.message).toContain(field);
    }
    expect((await call('GET', '/v1/sla-policies', tenant.headers)).json().data).toEqual([]);
  });

  it('keeps each priority, connection and team of the conditions once, however often it is sent', async () => {
    const { tenant, connection } = await workspace();
    const team = (await call('POST', '/v1/teams', tenant.headers, { name: 'Billing' })).json().data;
    const res = await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'Twice',
      firstResponse: 'PT1H',
      conditions: { priorities: ['low', 'low'], connectionIds: [connection.id, connection.id], teamIds: [team.id, team.id] },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.conditions).toEqual({ priorities: ['low'], connectionIds: [connection.id], teamIds: [team.id] });
  });
});

describe('a policy naming what was deleted since', () => {
  it('can still be renamed or disabled; its conditions are checked when written', async () => {
    const { tenant, connection } = await workspace();
    const team = (await call('POST', '/v1/teams', tenant.headers, { name: `Gone ${seq}` })).json().data;
    const conditions = { connectionIds: [connection.id], teamIds: [team.id] };
    const created = await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Fast', firstResponse: 'PT1H', conditions });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    expect((await call('DELETE', `/v1/teams/${team.id}`, tenant.headers)).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/connections/${connection.id}`, tenant.headers)).statusCode).toBe(200);
    const off = await call('PATCH', `/v1/sla-policies/${id}`, tenant.headers, { name: 'Fast (old)', enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toMatchObject({ name: 'Fast (old)', enabled: false, conditions });
    const again = await call('PATCH', `/v1/sla-policies/${id}`, tenant.headers, { conditions });
    expect(again.statusCode).toBe(422);
    expect(again.json().error.message).toContain('conditions.connectionIds');
  });
});

describe('SLA clocks', () => {
  it('gives a Friday 16:30 opening with PT1H in business hours a Monday 09:30 due time, with jobs at its moments', async () => {
    now = new Date('2026-03-06T15:30:00Z');
    const { tenant, connection } = await workspace();
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    const policy = (
      await call('POST', '/v1/sla-policies', tenant.headers, {
        name: 'Hours',
        firstResponse: 'PT1H',
        resolution: 'PT8H',
        businessHoursOnly: true,
      })
    ).json().data;
    const id = await contactWrites(connection, '+1555000001');
    const t = await thread(tenant.headers, id);
    expect(t.priority).toBe('normal');
    expect(t.sla).toEqual({
      policyId: policy.id,
      firstResponseDueAt: '2026-03-09T08:30:00.000Z',
      nextResponseDueAt: null,
      // 8 business hours: Friday 16:30–17:00, then Monday 09:00–16:30.
      resolutionDueAt: '2026-03-09T15:30:00.000Z',
      status: 'ok',
      breaches: [],
    });
    // Each moment is a job that starts then: 80 % of an hour is 48 business minutes (Monday 09:18).
    const jobs = await clockJobs(id);
    expect(jobs.map((j) => [j.data.target, j.data.kind, j.start_after.toISOString()])).toEqual([
      ['firstResponse', 'warning', '2026-03-09T08:18:00.000Z'],
      ['firstResponse', 'breached', '2026-03-09T08:30:00.000Z'],
      ['resolution', 'warning', '2026-03-09T13:54:00.000Z'],
      ['resolution', 'breached', '2026-03-09T15:30:00.000Z'],
    ]);
    for (const j of jobs) expect(j.data.at).toBe(j.start_after.toISOString());
  });

  it('warns at 80 % and breaches at the due time once each, to endpoints and the assignee', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const ada = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Fast', firstResponse: 'PT10M' });
    const id = await contactWrites(connection, '+1555000002');
    await call('PATCH', `/v1/threads/${id}`, tenant.headers, { assigneeId: ada.user.id });
    const [warning, breach] = await clockJobs(id);
    expect(warning!.data.at).toBe('2026-03-10T10:08:00.000Z');

    now = new Date(warning!.data.at);
    expect(await tellSlaMoment(ctx.deps, warning!.data)).toBe(true);
    expect(await tellSlaMoment(ctx.deps, warning!.data)).toBe(false); // a duplicate job tells nothing
    expect((await thread(tenant.headers, id)).sla.status).toBe('warning');
    expect((await call('GET', '/v1/threads?slaStatus=warning', tenant.headers)).json().data.map((x: { id: number }) => x.id)).toEqual([id]);

    now = new Date(breach!.data.at);
    expect(await tellSlaMoment(ctx.deps, breach!.data)).toBe(true);
    expect(await tellSlaMoment(ctx.deps, breach!.data)).toBe(false);
    const t = await thread(tenant.headers, id);
    expect(t.sla).toMatchObject({
      status: 'breached',
      breaches: [{ target: 'firstResponse', dueAt: '2026-03-10T10:10:00.000Z', breachedAt: '2026-03-10T10:10:00.000Z' }],
    });
    expect((await outboundEvents(tenant.workspace.id, 'sla.warning')).map((d) => d.id)).toEqual([id]);
    const breached = await outboundEvents(tenant.workspace.id, 'sla.breached');
    expect(breached).toHaveLength(1);
    expect(breached[0]).toMatchObject({ id, sla: { status: 'breached' } });
    expect((await notificationsOf(ada.user.id)).filter((n) => n.type.startsWith('sla_'))).toEqual([
      { type: 'sla_warning', thread_id: id },
      { type: 'sla_breached', thread_id: id },
    ]);
    expect((await call('GET', '/v1/threads?slaStatus=breached', tenant.headers)).json().data.map((x: { id: number }) => x.id)).toEqual([
      id,
    ]);
  });

  it('tells nothing more for a thread whose connection was deleted: nobody can answer it', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const ada = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Fast', firstResponse: 'PT10M' });
    const id = await contactWrites(connection, '+1555000012');
    await call('PATCH', `/v1/threads/${id}`, tenant.headers, { assigneeId: ada.user.id });
    const [warning, breach] = await clockJobs(id);
    expect((await call('DELETE', `/v1/connections/${connection.id}`, tenant.headers)).statusCode).toBe(200);
    for (const job of [warning!, breach!]) {
      now = new Date(job.data.at);
      expect(await tellSlaMoment(ctx.deps, job.data)).toBe(false);
    }
    expect((await thread(tenant.headers, id)).sla.status).toBe('ok');
    expect(await outboundEvents(tenant.workspace.id, 'sla.warning')).toEqual([]);
    expect(await outboundEvents(tenant.workspace.id, 'sla.breached')).toEqual([]);
    expect((await notificationsOf(ada.user.id)).filter((n) => n.type.startsWith('sla_'))).toEqual([]);
  });

  it('tells a target once per opening, even when a changed policy moves its due time', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const ada = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Standard', position: 2, firstResponse: 'PT10M' });
    await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'Urgent',
      position: 1,
      firstResponse: 'PT20M',
      conditions: { priorities: ['urgent'] },
    });
    const id = await contactWrites(connection, '+1555000010');
    await call('PATCH', `/v1/threads/${id}`, tenant.headers, { assigneeId: ada.user.id });
    for (const job of await clockJobs(id)) {
      now = new Date(job.data.at);
      expect(await tellSlaMoment(ctx.deps, job.data)).toBe(true);
    }
    // Urgent now: the clock runs from the opening under PT20M, its warning and due time already past.
    now = new Date('2026-03-10T10:30:00Z');
    const patched = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { priority: 'urgent' });
    expect(patched.json().data.sla).toMatchObject({ firstResponseDueAt: '2026-03-10T10:20:00.000Z', status: 'breached' });
    const moved = (await clockJobs(id)).filter((j) => j.data.at >= '2026-03-10T10:16:00.000Z');
    expect(moved.map((j) => j.data.kind)).toEqual(['warning', 'breached']);
    for (const job of moved) await tellSlaMoment(ctx.deps, job.data);

    expect(await outboundEvents(tenant.workspace.id, 'sla.warning')).toHaveLength(1);
    expect(await outboundEvents(tenant.workspace.id, 'sla.breached')).toHaveLength(1);
    expect((await notificationsOf(ada.user.id)).filter((n) => n.type.startsWith('sla_'))).toEqual([
      { type: 'sla_warning', thread_id: id },
      { type: 'sla_breached', thread_id: id },
    ]);
    expect((await thread(tenant.headers, id)).sla).toMatchObject({
      status: 'breached',
      breaches: [{ target: 'firstResponse', dueAt: '2026-03-10T10:10:00.000Z' }],
    });
  });

  it('tells the members of the team when nobody is assigned', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const bo = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Bo', roles: ['agent'] });
    const team = (await call('POST', '/v1/teams', tenant.headers, { name: 'Support' })).json().data;
    await ctx.app.inject({
      method: 'PUT',
      url: `/v1/teams/${team.id}/members`,
      headers: tenant.headers,
      payload: { userIds: [bo.user.id] },
    });
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Team', firstResponse: 'PT10M', conditions: { teamIds: [team.id] } });
    const id = await contactWrites(connection, '+1555000003');
    expect((await thread(tenant.headers, id)).sla).toBeNull(); // no team yet: the policy does not match
    const moved = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { teamId: team.id });
    expect(moved.json().data.sla).toMatchObject({ firstResponseDueAt: '2026-03-10T10:10:00.000Z' });
    const breach = (await clockJobs(id)).find((j) => j.data.kind === 'breached')!;
    now = new Date(breach.data.at);
    await tellSlaMoment(ctx.deps, breach.data);
    expect(await notificationsOf(bo.user.id)).toEqual([{ type: 'sla_breached', thread_id: id }]);
  });

  it('is met by a reply, not by a note; next response runs from the contact message after it; resolving stops it', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'All',
      firstResponse: 'PT1H',
      nextResponse: 'PT30M',
      resolution: 'P1D',
    });
    const id = await contactWrites(connection, '+1555000004');
    const note = await call('POST', `/v1/threads/${id}/messages`, tenant.headers, { text: 'looking', private: true });
    expect(note.statusCode, note.body).toBe(201);
    expect((await thread(tenant.headers, id)).sla.firstResponseDueAt).toBe('2026-03-10T11:00:00.000Z');
    const [warning] = await clockJobs(id);

    now = new Date('2026-03-10T10:20:00Z');
    const reply = await call('POST', `/v1/threads/${id}/messages`, tenant.headers, { text: 'on it' });
    expect(reply.statusCode, reply.body).toBe(202);
    let t = await thread(tenant.headers, id);
    expect(t.sla).toMatchObject({
      firstResponseDueAt: null,
      nextResponseDueAt: null,
      resolutionDueAt: '2026-03-11T10:00:00.000Z',
      status: 'ok',
    });
    // The warning of a met target is nothing when its job comes.
    now = new Date(warning!.data.at);
    expect(await tellSlaMoment(ctx.deps, warning!.data)).toBe(false);

    now = new Date('2026-03-10T12:00:00Z');
    await contactWrites(connection, '+1555000004', 'and?');
    t = await thread(tenant.headers, id);
    expect(t.sla.nextResponseDueAt).toBe('2026-03-10T12:30:00.000Z');

    const resolved = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' });
    expect(resolved.json().data.sla).toMatchObject({
      firstResponseDueAt: null,
      nextResponseDueAt: null,
      resolutionDueAt: null,
      status: 'ok',
    });
    // Reopened by the contact: a new opening, a new first-response clock.
    now = new Date('2026-03-12T09:00:00Z');
    await contactWrites(connection, '+1555000004', 'again');
    expect((await thread(tenant.headers, id)).sla.firstResponseDueAt).toBe('2026-03-12T10:00:00.000Z');
  });

  it('counts a breach whose job had not run yet when a late reply or the resolution came', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'All', firstResponse: 'PT1H', resolution: 'PT2H' });
    const id = await contactWrites(connection, '+1555000014');
    const jobs = await clockJobs(id);
    // The worker was away past both due times: the reply and the resolution come first.
    now = new Date('2026-03-10T11:00:00Z');
    await reply(tenant.headers, id);
    let t = await thread(tenant.headers, id);
    expect(t.sla.status).toBe('breached');
    expect(t.sla.breaches).toEqual([
      { target: 'firstResponse', dueAt: '2026-03-10T11:00:00.000Z', breachedAt: '2026-03-10T11:00:00.000Z' },
    ]);
    now = new Date('2026-03-10T12:00:01Z');
    const resolved = await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' });
    expect(resolved.statusCode, resolved.body).toBe(200);
    t = await thread(tenant.headers, id);
    expect(t.sla.breaches.map((b: { target: string }) => b.target)).toEqual(['firstResponse', 'resolution']);
    // The jobs, when they come, find their moments counted and tell nothing more.
    for (const job of jobs) expect(await tellSlaMoment(ctx.deps, job.data)).toBe(false);
    expect((await thread(tenant.headers, id)).sla.breaches).toHaveLength(2);
    const [row] = await db.selectFrom('conversations').select('sla_breaches').where('thread_id', '=', id).execute();
    expect(row!.sla_breaches).toBe(2);
  });

  it('keeps the clocks and breaches of a pending or snoozed thread the contact writes into: no new opening', async () => {
    let n = 0;
    for (const patch of [{ status: 'pending' }, { status: 'snoozed', snoozedUntil: '2026-03-11T10:00:00Z' }]) {
      now = new Date('2026-03-10T10:00:00Z');
      const { tenant, connection } = await workspace();
      await call('POST', '/v1/sla-policies', tenant.headers, { name: 'All', firstResponse: 'PT10M', resolution: 'P1D' });
      const id = await contactWrites(connection, `+155500002${++n}`);
      const breach = (await clockJobs(id)).find((j) => j.data.target === 'firstResponse' && j.data.kind === 'breached')!;
      now = new Date(breach.data.at);
      expect(await tellSlaMoment(ctx.deps, breach.data)).toBe(true);
      const before = (await thread(tenant.headers, id)).sla;
      expect(before).toMatchObject({ status: 'breached', firstResponseDueAt: '2026-03-10T10:10:00.000Z' });

      now = new Date('2026-03-10T11:00:00Z');
      expect((await call('PATCH', `/v1/threads/${id}`, tenant.headers, patch)).statusCode).toBe(200);
      now = new Date('2026-03-10T12:00:00Z');
      await contactWrites(connection, `+155500002${n}`, 'hello?');
      const after = await thread(tenant.headers, id);
      expect(after.status, patch.status).toBe('open');
      // Still the first opening (the reports see one conversation): its clocks and breach stay.
      expect(after.sla, patch.status).toEqual(before);
      expect(await db.selectFrom('conversations').select('id').where('thread_id', '=', id).execute()).toHaveLength(1);
    }
  });

  it('is met by a reply just before the due time', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'All', firstResponse: 'PT1H' });
    const id = await contactWrites(connection, '+1555000015');
    now = new Date('2026-03-10T10:59:59.999Z');
    await reply(tenant.headers, id);
    expect((await thread(tenant.headers, id)).sla).toMatchObject({ status: 'ok', breaches: [] });
  });

  it('is met by a message the business starts in the thread the contact waits in (POST /v1/conversations)', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'All', firstResponse: 'PT1H', nextResponse: 'PT30M' });
    const id = await contactWrites(connection, '+15550000012');
    now = new Date('2026-03-10T10:05:00Z');
    const started = await call('POST', '/v1/conversations', tenant.headers, {
      connectionId: connection.id,
      to: '+15550000012',
      text: 'Your order shipped',
    });
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json().data.thread).toMatchObject({ id, sla: { firstResponseDueAt: null, nextResponseDueAt: null } });
    // The contact answers it: the next response runs from there.
    now = new Date('2026-03-10T11:00:00Z');
    await contactWrites(connection, '+15550000012', 'thanks, and the invoice?');
    expect((await thread(tenant.headers, id)).sla).toMatchObject({
      firstResponseDueAt: null,
      nextResponseDueAt: '2026-03-10T11:30:00.000Z',
    });
  });

  it('runs the clocks of a thread the business starts: nobody waits yet, the next response runs from the answer', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const policy = (
      await call('POST', '/v1/sla-policies', tenant.headers, {
        name: 'All',
        firstResponse: 'PT1H',
        nextResponse: 'PT30M',
        resolution: 'P1D',
      })
    ).json().data;
    const started = await call('POST', '/v1/conversations', tenant.headers, {
      connectionId: connection.id,
      to: '+14155550123',
      text: 'Your order shipped',
    });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json().data.thread.id;
    expect(started.json().data.thread.sla).toEqual({
      policyId: policy.id,
      firstResponseDueAt: null,
      nextResponseDueAt: null,
      resolutionDueAt: '2026-03-11T10:00:00.000Z',
      status: 'ok',
      breaches: [],
    });
    now = new Date('2026-03-10T11:00:00Z');
    await contactWrites(connection, '+14155550123', 'thanks, and the invoice?');
    expect((await thread(tenant.headers, id)).sla).toMatchObject({ nextResponseDueAt: '2026-03-10T11:30:00.000Z', status: 'ok' });
    expect((await call('GET', '/v1/threads?sort=sla', tenant.headers)).json().data.map((t: { id: number }) => t.id)).toEqual([id]);
  });

  it("is not met by an automation rule's reply: only a user's or an API key's", async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'All', firstResponse: 'PT1H', nextResponse: 'PT30M' });
    const rule = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Acknowledge',
      event: 'message.created',
      actions: [{ type: 'reply', text: 'Thanks, we will be with you shortly' }],
    });
    expect(rule.statusCode, rule.body).toBe(201);
    const id = await contactWrites(connection, '+1555000011');
    now = new Date('2026-03-10T10:05:00Z');
    await contactWrites(connection, '+1555000011', 'still there?');
    const acknowledged = await db
      .selectFrom('messages')
      .select('text')
      .where('thread_id', '=', id)
      .where('direction', '=', 'outbound')
      .where('kind', '=', 'message')
      .execute();
    expect(acknowledged).toHaveLength(2);
    expect((await thread(tenant.headers, id)).sla).toMatchObject({
      firstResponseDueAt: '2026-03-10T11:00:00.000Z',
      nextResponseDueAt: null,
    });

    now = new Date('2026-03-10T10:20:00Z');
    expect((await call('POST', `/v1/threads/${id}/messages`, tenant.headers, { text: 'on it' })).statusCode).toBe(202);
    expect((await thread(tenant.headers, id)).sla).toMatchObject({ firstResponseDueAt: null });
  });

  it('applies the first matching enabled policy by position, again when the priority changes; ?priority= and ?sort=sla', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Off', position: 0, enabled: false, firstResponse: 'PT1M' });
    const urgent = (
      await call('POST', '/v1/sla-policies', tenant.headers, {
        name: 'Urgent',
        position: 1,
        firstResponse: 'PT15M',
        conditions: { priorities: ['urgent'] },
      })
    ).json().data;
    const standard = (
      await call('POST', '/v1/sla-policies', tenant.headers, { name: 'Standard', position: 2, firstResponse: 'PT2H' })
    ).json().data;
    const a = await contactWrites(connection, '+1555000005');
    const b = await contactWrites(connection, '+1555000006');
    const c = await contactWrites(connection, '+1555000007');
    expect((await thread(tenant.headers, a)).sla.policyId).toBe(standard.id);

    now = new Date('2026-03-10T10:30:00Z');
    const patched = await call('PATCH', `/v1/threads/${b}`, tenant.headers, { priority: 'urgent' });
    expect(patched.statusCode, patched.body).toBe(200);
    // The new policy's clock runs from the opening.
    expect(patched.json().data).toMatchObject({
      priority: 'urgent',
      sla: { policyId: urgent.id, firstResponseDueAt: '2026-03-10T10:15:00.000Z' },
    });
    expect((await call('PATCH', `/v1/threads/${c}`, tenant.headers, { priority: 'soon' })).statusCode).toBe(422);

    const ids = async (query: string) =>
      (await call('GET', `/v1/threads?${query}`, tenant.headers)).json().data.map((x: { id: number }) => x.id);
    expect(await ids('priority=urgent')).toEqual([b]);
    expect(await ids('priority=low,normal')).toEqual([c, a]);
    expect(await ids('sort=sla&limit=2')).toEqual([b, a]);
    const page = await call('GET', '/v1/threads?sort=sla&limit=2', tenant.headers);
    const rest = await call('GET', `/v1/threads?sort=sla&limit=2&cursor=${page.json().meta.nextCursor}`, tenant.headers);
    expect(rest.json().data.map((x: { id: number }) => x.id)).toEqual([c]);
    for (const bad of ['priority=soon', 'slaStatus=late', 'sort=due'])
      expect((await call('GET', `/v1/threads?${bad}`, tenant.headers)).statusCode).toBe(422);
  });

  it('runs the clocks of a policy that comes to apply later from the opening, met by a reply given before; none once resolved', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const vip = (
      await call('POST', '/v1/sla-policies', tenant.headers, {
        name: 'VIP',
        firstResponse: 'PT30M',
        resolution: 'PT1H',
        conditions: { labels: ['vip'] },
      })
    ).json().data;
    const answered = await contactWrites(connection, '+1555000011');
    const waiting = await contactWrites(connection, '+1555000012');
    const done = await contactWrites(connection, '+1555000013');
    expect((await thread(tenant.headers, answered)).sla).toBeNull();

    now = new Date('2026-03-10T10:10:00Z');
    expect((await call('POST', `/v1/threads/${answered}/messages`, tenant.headers, { text: 'On it.' })).statusCode).toBe(202);
    expect((await call('PATCH', `/v1/threads/${done}`, tenant.headers, { status: 'resolved' })).statusCode).toBe(200);

    now = new Date('2026-03-10T10:20:00Z');
    const label = (id: number) => call('PATCH', `/v1/threads/${id}`, tenant.headers, { labels: ['vip'] });
    expect((await label(waiting)).json().data.sla).toMatchObject({
      policyId: vip.id,
      firstResponseDueAt: '2026-03-10T10:30:00.000Z',
      resolutionDueAt: '2026-03-10T11:00:00.000Z',
      status: 'ok',
    });
    expect((await label(answered)).json().data.sla).toMatchObject({
      policyId: vip.id,
      firstResponseDueAt: null,
      resolutionDueAt: '2026-03-10T11:00:00.000Z',
    });
    expect((await clockJobs(waiting)).map((j) => j.data.at)).toEqual([
      '2026-03-10T10:24:00.000Z',
      '2026-03-10T10:30:00.000Z',
      '2026-03-10T10:48:00.000Z',
      '2026-03-10T11:00:00.000Z',
    ]);
    expect((await label(done)).json().data.sla).toBeNull();
    expect(await clockJobs(done)).toEqual([]);
  });

  it("keeps a resolved thread's clock and breaches when it is labelled or given a priority at wrap-up", async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const standard = (
      await call('POST', '/v1/sla-policies', tenant.headers, {
        name: 'Standard',
        position: 2,
        firstResponse: 'PT10M',
        conditions: { priorities: ['low', 'normal'] },
      })
    ).json().data;
    await call('POST', '/v1/sla-policies', tenant.headers, {
      name: 'VIP',
      position: 1,
      firstResponse: 'PT5M',
      conditions: { labels: ['vip'] },
    });
    const id = await contactWrites(connection, '+1555000031');
    const breach = (await clockJobs(id)).find((j) => j.data.kind === 'breached')!;
    now = new Date(breach.data.at);
    expect(await tellSlaMoment(ctx.deps, breach.data)).toBe(true);
    now = new Date('2026-03-10T10:20:00Z');
    const resolved = (await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' })).json().data.sla;
    expect(resolved).toMatchObject({ policyId: standard.id, status: 'breached', breaches: [{ target: 'firstResponse' }] });
    // Another policy would match, then none would: the record of the opening stays as it was.
    for (const patch of [{ labels: ['vip'] }, { labels: [], priority: 'urgent' }]) {
      const res = await call('PATCH', `/v1/threads/${id}`, tenant.headers, patch);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.sla, JSON.stringify(patch)).toEqual(resolved);
    }
    const ids = async (query: string) =>
      (await call('GET', `/v1/threads?${query}`, tenant.headers)).json().data.map((x: { id: number }) => x.id);
    expect(await ids('slaStatus=breached')).toEqual([id]);
  });

  it('counts a reply given before another policy came to time the first response', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const urgent = await urgentOverStandard(tenant.headers, { firstResponse: 'PT30M' });
    const answered = await contactWrites(connection, '+1555000014');
    const waiting = await contactWrites(connection, '+1555000015');
    now = new Date('2026-03-10T10:05:00Z');
    await reply(tenant.headers, answered);

    now = new Date('2026-03-10T10:10:00Z');
    const urgentNow = (id: number) => call('PATCH', `/v1/threads/${id}`, tenant.headers, { priority: 'urgent' });
    expect((await urgentNow(answered)).json().data.sla).toMatchObject({ policyId: urgent.id, firstResponseDueAt: null, status: 'ok' });
    expect((await urgentNow(waiting)).json().data.sla).toMatchObject({
      policyId: urgent.id,
      firstResponseDueAt: '2026-03-10T10:30:00.000Z',
    });
    expect((await clockJobs(answered)).filter((j) => j.data.target === 'firstResponse')).toEqual([]);
  });

  it('runs the next response of a policy that comes to time it from the message the contact waits with', async () => {
    now = new Date('2026-03-10T10:00:00Z');
    const { tenant, connection } = await workspace();
    const urgent = await urgentOverStandard(tenant.headers, { nextResponse: 'PT15M' });
    const standard = await contactWrites(connection, '+1555000016');
    const answered = await contactWrites(connection, '+1555000017');
    now = new Date('2026-03-10T10:05:00Z');
    for (const id of [standard, answered]) await reply(tenant.headers, id);
    now = new Date('2026-03-10T10:10:00Z');
    await contactWrites(connection, '+1555000016', 'still there?');
    now = new Date('2026-03-10T10:20:00Z');
    expect((await call('PATCH', `/v1/threads/${standard}`, tenant.headers, { priority: 'urgent' })).json().data.sla).toMatchObject({
      policyId: urgent.id,
      nextResponseDueAt: '2026-03-10T10:25:00.000Z',
    });
    // The reply was the last word: no next response is due until the contact writes.
    expect((await call('PATCH', `/v1/threads/${answered}`, tenant.headers, { priority: 'urgent' })).json().data.sla).toMatchObject({
      policyId: urgent.id,
      nextResponseDueAt: null,
    });
    now = new Date('2026-03-10T10:21:00Z');
    await contactWrites(connection, '+1555000017', 'and now?');
    expect((await thread(tenant.headers, answered)).sla).toMatchObject({ nextResponseDueAt: '2026-03-10T10:36:00.000Z' });

    // A thread that had no clock at all: a label policy applying later times both from the opening.
    now = new Date('2026-03-10T11:00:00Z');
    const other = await workspace();
    const vip = (
      await call('POST', '/v1/sla-policies', other.tenant.headers, {
        name: 'VIP',
        firstResponse: 'PT30M',
        nextResponse: 'PT15M',
        conditions: { labels: ['vip'] },
      })
    ).json().data;
    const plain = await contactWrites(other.connection, '+1555000018');
    now = new Date('2026-03-10T11:05:00Z');
    await reply(other.tenant.headers, plain);
    now = new Date('2026-03-10T11:10:00Z');
    await contactWrites(other.connection, '+1555000018', 'still there?');
    now = new Date('2026-03-10T11:20:00Z');
    expect((await call('PATCH', `/v1/threads/${plain}`, other.tenant.headers, { labels: ['vip'] })).json().data.sla).toMatchObject({
      policyId: vip.id,
      firstResponseDueAt: null,
      nextResponseDueAt: '2026-03-10T11:25:00.000Z',
    });
  });

  it('leaves threads of a workspace without a policy without a clock', async () => {
    const { tenant, connection } = await workspace();
    const id = await contactWrites(connection, '+1555000008');
    expect((await thread(tenant.headers, id)).sla).toBeNull();
    expect(await clockJobs(id)).toEqual([]);
  });
});

describe('away replies', () => {
  it('answers a thread opened outside business hours once per 12 h, like a reply with no author, and never inside hours', async () => {
    now = new Date('2026-03-07T12:00:00Z'); // Saturday
    const { tenant, connection } = await workspace();
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    const set = await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { awayMessage: 'We are back on Monday at 9.' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.awayMessage).toBe('We are back on Monday at 9.');

    const id = await contactWrites(connection, '+1555000009');
    const outbound = () =>
      db.selectFrom('messages').selectAll().where('thread_id', '=', id).where('direction', '=', 'outbound').orderBy('id').execute();
    let sent = await outbound();
    // The service wrote the away reply itself: the console names it "Automation".
    expect(sent.map((m) => [m.kind, m.text, m.author_id, m.status, m.automation])).toEqual([
      ['message', 'We are back on Monday at 9.', null, 'queued', true],
      ['activity', 'Outside business hours: the away message was sent', null, 'sent', false],
    ]);
    // Resolved and reopened within 12 h: not again.
    await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' });
    now = new Date('2026-03-07T20:00:00Z');
    await contactWrites(connection, '+1555000009', 'hello?');
    expect((await outbound()).filter((m) => m.kind === 'message')).toHaveLength(1);
    // 12 h later, reopened again: answered again.
    await call('PATCH', `/v1/threads/${id}`, tenant.headers, { status: 'resolved' });
    now = new Date('2026-03-08T08:00:00Z');
    await contactWrites(connection, '+1555000009', 'anyone?');
    sent = await outbound();
    expect(sent.filter((m) => m.kind === 'message').map((m) => m.text)).toEqual([
      'We are back on Monday at 9.',
      'We are back on Monday at 9.',
    ]);

    // Inside hours (Monday 10:00 in Berlin), a new thread gets none.
    now = new Date('2026-03-09T09:00:00Z');
    const inside = await contactWrites(connection, '+1555000010');
    const inHours = await db
      .selectFrom('messages')
      .select('id')
      .where('thread_id', '=', inside)
      .where('direction', '=', 'outbound')
      .execute();
    expect(inHours).toEqual([]);
  });
  it('announces the thread with the away reply as its last message, as the thread is stored', async () => {
    now = new Date('2026-03-07T12:00:00Z'); // Saturday
    const { tenant, connection } = await workspace();
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { awayMessage: 'Back on Monday.' });
    const id = await contactWrites(connection, '+1555000020', 'Is anyone there?');
    const stored = await thread(tenant.headers, id);
    expect(stored.lastMessagePreview).toBe('Back on Monday.');
    // The socket and the endpoints are told the same Thread: the list shows the reply at once.
    const told = (await outboundEvents(tenant.workspace.id, 'thread.updated')).filter((t: { id: number }) => t.id === id);
    expect(told.at(-1)).toEqual(stored);
  });

  it('never answers mail a machine sent (an auto-reply, a bounce): two auto-responders would answer each other', async () => {
    now = new Date('2026-03-07T12:00:00Z'); // Saturday
    const tenant = await makeTenant(ctx.deps);
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    const mailbox = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'email.postmark',
      externalAccountId: 'help@acme.test',
    });
    expect((await call('PATCH', `/v1/connections/${mailbox.id}`, tenant.headers, { awayMessage: 'Back on Monday.' })).statusCode).toBe(200);
    /** A mail as Postmark posts it, applied as the worker applies its delivery; answers the outbound texts of its thread. */
    const mailFrom = async (from: string, headers: { Name: string; Value: string }[]) => {
      const payload = JSON.parse(fixture('email.postmark', 'inbound.json'));
      Object.assign(payload, { OriginalRecipient: 'help@acme.test', FromFull: { Email: from, Name: '' }, Headers: headers });
      payload.MessageID = `${from}-${++seq}`;
      const events = adapters['email.postmark'].normalise(payload, { verification: 'signed' });
      await db
        .transaction()
        .execute((trx) => applyDeliveries(ctx.deps, trx, [{ deliveryId: `mail-${seq}`, integrationKey: 'email.postmark', events }], now));
      const row = await db
        .selectFrom('messages')
        .select('thread_id')
        .where('external_id', '=', payload.MessageID)
        .executeTakeFirstOrThrow();
      const out = await db
        .selectFrom('messages')
        .select('text')
        .where('thread_id', '=', row.thread_id)
        .where('direction', '=', 'outbound')
        .where('kind', '=', 'message')
        .execute();
      return out.map((m) => m.text);
    };
    expect(await mailFrom('ooo@example.com', [{ Name: 'Auto-Submitted', Value: 'auto-replied' }])).toEqual([]);
    expect(await mailFrom('news@example.com', [{ Name: 'Precedence', Value: 'bulk' }])).toEqual([]);
    expect(await mailFrom('MAILER-DAEMON@mx.example.com', [])).toEqual([]);
    // A person's mail, at the same hour, is answered.
    expect(await mailFrom('ada@example.com', [{ Name: 'Auto-Submitted', Value: 'no' }])).toEqual(['Back on Monday.']);
  });

  it("answers a live chat visitor's first words outside business hours: the conversation started empty", async () => {
    now = new Date('2026-03-07T12:00:00Z'); // Saturday
    const tenant = await makeTenant(ctx.deps);
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const set = await call('PATCH', `/v1/connections/${widget.connection.id}`, tenant.headers, { awayMessage: 'Back on Monday.' });
    expect(set.statusCode, set.body).toBe(200);
    const visitor = await startVisitor(ctx.app, widget.key!);
    for (const text of ['Hello?', 'Anyone there?'])
      expect((await visitorSays(ctx.app, widget.key!, visitor.token, text)).statusCode).toBe(201);
    const outbound = await db
      .selectFrom('messages')
      .select(['kind', 'text', 'author_id'])
      .where('thread_id', '=', visitor.threadId)
      .where('direction', '=', 'outbound')
      .orderBy('id')
      .execute();
    expect(outbound).toEqual([
      { kind: 'message', text: 'Back on Monday.', author_id: null },
      { kind: 'activity', text: 'Outside business hours: the away message was sent', author_id: null },
    ]);
  });
});
