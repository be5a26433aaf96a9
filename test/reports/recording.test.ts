import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { BERLIN_9_TO_5, smsFromContact, week } from '../helpers/inbound.js';

// Conversations are recorded by the changes that make them (docs/reports.md). The clock is the
// service's injected one, so durations are exact.
let now = new Date('2026-03-06T15:30:00Z'); // a Friday, 16:30 in Berlin
const ctx = await useTestContext({ now: () => now });
const db = ctx.deps.db;

type Method = 'GET' | 'POST' | 'PATCH';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

let seq = 0;
async function workspace() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4930${++seq}` });
  return { tenant, connection };
}

/** A contact writes (delivered `times` times, as a provider retrying does); answers the thread. */
const contactWrites = (connection: { externalAccountId: string }, from: string, times = 1) =>
  smsFromContact(ctx, connection, from, { times });

const conversationsOf = (threadId: number) =>
  db.selectFrom('conversations').selectAll().where('thread_id', '=', threadId).orderBy('id').execute();
const counters = (threadId: number) =>
  db
    .selectFrom('threads')
    .select(['conversation_messages_in', 'conversation_messages_out'])
    .where('id', '=', threadId)
    .executeTakeFirstOrThrow();
const later = (seconds: number) => {
  now = new Date(now.getTime() + seconds * 1000);
};

describe('recording conversations', () => {
  it('opens on the first message, answers on the first reply, resolves with what the thread was, and opens again', async () => {
    const { tenant, connection } = await workspace();
    const { user } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: BERLIN_9_TO_5 });
    const openedAt = now;
    const threadId = await contactWrites(connection, '+491701', 2); // a retry is not a second message
    later(60);
    await contactWrites(connection, '+491701');
    expect(await counters(threadId)).toEqual({ conversation_messages_in: 2, conversation_messages_out: 0 });

    // A note answers nobody.
    expect((await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'n', private: true })).statusCode).toBe(201);
    // Monday 09:30 Berlin: 65 calendar hours later, one business hour (16:30–17:00, 09:00–09:30).
    now = new Date('2026-03-09T08:30:00Z');
    expect((await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'hello' })).statusCode).toBe(202);
    const answeredAt = now;
    later(120);
    expect((await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'more' })).statusCode).toBe(202);
    let [c] = await conversationsOf(threadId);
    expect(c).toMatchObject({
      workspace_id: tenant.workspace.id,
      connection_id: connection.id,
      reopened: false,
      opened_at: openedAt,
      first_response_at: answeredAt,
      first_response_seconds: 65 * 3600,
      first_response_business_seconds: 3600,
      resolved_at: null,
      messages_in: null,
    });

    later(600);
    const patch = { status: 'resolved', assigneeId: user.id, labels: ['billing'], priority: 'high' };
    expect((await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, patch)).statusCode).toBe(200);
    [c] = await conversationsOf(threadId);
    const resolvedAfter = (now.getTime() - openedAt.getTime()) / 1000;
    expect(c).toMatchObject({
      resolved_at: now,
      resolution_seconds: resolvedAfter,
      resolution_business_seconds: 3600 + 720,
      assignee_id: user.id,
      labels: ['billing'],
      priority: 'high',
      messages_in: 2,
      messages_out: 2,
      sla_breaches: 0,
    });
    expect(await counters(threadId)).toEqual({ conversation_messages_in: 0, conversation_messages_out: 0 });

    // The contact writes again: a second conversation, counted from zero.
    later(3600);
    await contactWrites(connection, '+491701');
    let all = await conversationsOf(threadId);
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ reopened: true, opened_at: now, resolved_at: null, first_response_at: null });
    expect(await counters(threadId)).toEqual({ conversation_messages_in: 1, conversation_messages_out: 0 });

    // Resolved and opened again by an agent: a third.
    later(60);
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'resolved' });
    later(60);
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'open' });
    all = await conversationsOf(threadId);
    expect(all.map((r) => [r.reopened, r.resolved_at !== null, r.messages_in])).toEqual([
      [false, true, 2],
      [true, true, 1],
      [true, false, null],
    ]);
    // Snoozing and waking are not openings.
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'pending' });
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'open' });
    expect(await conversationsOf(threadId)).toHaveLength(3);
  });

  it('opens a conversation for a thread started by the business, and counts what it sends', async () => {
    const { tenant, connection } = await workspace();
    const started = await call('POST', '/v1/conversations', tenant.headers, {
      connectionId: connection.id,
      to: '+491709',
      text: 'Your order',
    });
    expect(started.statusCode, started.body).toBe(202);
    const threadId = started.json().data.thread.id;
    const [c] = await conversationsOf(threadId);
    expect(c).toMatchObject({ opened_at: now, reopened: false, first_response_at: null });
    expect(await counters(threadId)).toEqual({ conversation_messages_in: 0, conversation_messages_out: 1 });
  });

  it('takes a message the business starts into an open thread as its first response', async () => {
    const { tenant, connection } = await workspace();
    const openedAt = now;
    const threadId = await contactWrites(connection, '+491703');
    later(300);
    const started = await call('POST', '/v1/conversations', tenant.headers, {
      connectionId: connection.id,
      to: '+491703',
      text: 'About your order',
    });
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json().data.thread.id).toBe(threadId);
    const answeredAt = now;
    later(60);
    await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'and more' });
    const [c] = await conversationsOf(threadId);
    expect(c).toMatchObject({ opened_at: openedAt, first_response_at: answeredAt, first_response_seconds: 300 });
  });

  it('records business seconds on the team’s own hours when the thread has a team that has them', async () => {
    const { tenant, connection } = await workspace();
    now = new Date('2026-03-10T10:00:00Z'); // Tuesday 11:00 in Berlin, 06:00 in New York
    const team = await call('POST', '/v1/teams', tenant.headers, {
      name: `NY ${seq}`,
      businessHours: { timezone: 'America/New_York', weekly: week([['09:00', '17:00']]), holidays: [] },
    });
    expect(team.statusCode, team.body).toBe(201);
    const threadId = await contactWrites(connection, '+491702');
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { teamId: team.json().data.id });
    later(4 * 3600); // 10:00 in New York: one business hour
    await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'hello' });
    const [c] = await conversationsOf(threadId);
    expect(c).toMatchObject({ first_response_seconds: 4 * 3600, first_response_business_seconds: 3600 });
  });
});
