import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { REOPENED_BY_MESSAGE, SNOOZE_ENDED } from '../../src/threads/activity.js';
import { SNOOZE_QUEUE, type SnoozeJob } from '../../src/threads/snooze.enqueue.js';
import { snoozeQueue } from '../../src/threads/snooze.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus, signedInUser, transcriptLines } from './workflow-helpers.js';

const ctx = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id);
const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['admin'] });
const bo = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Bo', roles: ['agent'] });
const other = await makeTenant(ctx.deps);
const otherConnection = await makeConnection(ctx.deps, other.workspace.id);
const stranger = await signedInUser(ctx.app, ctx, other.workspace.id, { name: 'Stranger' });
const bus = await listenToBus(ctx.database.url);
// An endpoint that takes every event: the outbox shows what customers are sent.
const endpoint = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: tenant.headers,
  payload: { url: 'http://127.0.0.1:9/hook', events: ['thread.updated'] },
});
expect(endpoint.statusCode, endpoint.body).toBe(201);

let seq = 0;
const newThread = async () => inbound(ctx, connection, `contact-${++seq}`, `wamid.wf-${seq}`, `hello ${seq}`);
const patch = (id: number, payload: unknown, headers: Record<string, string> = ada.headers) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${id}`, headers, payload: payload as object });
const threadRow = (id: number) => ctx.deps.db.selectFrom('threads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const getThread = async (id: number) =>
  (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}`, headers: tenant.headers })).json().data;
const outboxOf = async (threadId: number) => {
  const rows = await ctx.deps.db
    .selectFrom('webhook_events')
    .select(['type', 'body'])
    .where('type', '=', 'thread.updated')
    .orderBy('created_at')
    .execute();
  return rows.map((r) => JSON.parse(r.body).data).filter((d: { id: number }) => d.id === threadId);
};
/** Everything a refused request must not have written. */
const snapshot = async (id: number) => ({
  thread: await threadRow(id),
  lines: (await transcriptLines(ctx, id)).length,
  events: (await outboxOf(id)).length,
  jobs: Number(
    (await sql<{ n: string }>`SELECT count(*) AS n FROM pgboss.job WHERE name = ${SNOOZE_QUEUE}`.execute(ctx.deps.db)).rows[0]!.n,
  ),
});

describe('PATCH /v1/threads/:id', () => {
  it('assigns, resolves and labels: one activity line each, thread.updated to sockets and endpoints', async () => {
    const id = await newThread();
    const res = await patch(id, { assigneeId: bo.user.id, status: 'resolved', labels: ['Billing', 'vip', 'billing'] });
    expect(res.statusCode, res.body).toBe(200);
    const thread = res.json().data;
    expect(thread).toMatchObject({
      id,
      status: 'resolved',
      assigneeId: bo.user.id,
      labels: ['billing', 'vip'],
      snoozedUntil: null,
      unreadCount: 1,
      agentLastSeenAt: null,
    });
    expect(await getThread(id)).toEqual(thread);

    const lines = await transcriptLines(ctx, id);
    expect(lines.map((l) => l.text)).toEqual([
      'Ada resolved the conversation',
      'Ada assigned the conversation to Bo',
      'Ada added the labels billing, vip',
    ]);
    expect(lines.every((l) => l.kind === 'activity' && l.private && l.author_id === ada.user.id && l.status === 'sent')).toBe(true);
    // The transcript shows them with the Message fields.
    const transcript = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${id}/messages`, headers: tenant.headers })).json().data;
    expect(transcript[0]).toMatchObject({ kind: 'activity', private: true, authorId: ada.user.id });

    const heard = await waitFor(
      async () => bus.find((e) => e.type === 'thread.updated' && e.data.id === id && e.data.status === 'resolved'),
      'thread.updated on the bus',
    );
    expect(heard.data).toEqual(thread);
    expect(await outboxOf(id)).toContainEqual(thread);

    // Unassign and remove a label: said as such.
    expect((await patch(id, { assigneeId: null, labels: ['vip'] })).statusCode).toBe(200);
    expect((await transcriptLines(ctx, id)).slice(3).map((l) => l.text)).toEqual([
      'Ada unassigned Bo from the conversation',
      'Ada removed the label billing',
    ]);
  });

  it('names an API key in its activity lines, with no author', async () => {
    const id = await newThread();
    expect((await patch(id, { status: 'pending' }, tenant.headers)).statusCode).toBe(200);
    const [line] = await transcriptLines(ctx, id);
    expect(line).toMatchObject({ text: 'API key test key marked the conversation as pending', author_id: null });
  });

  it('a patch that changes nothing writes and announces nothing', async () => {
    const id = await newThread();
    await patch(id, { labels: ['a'] });
    const before = await snapshot(id);
    const res = await patch(id, { status: 'open', labels: ['A'], assigneeId: null });
    expect(res.statusCode).toBe(200);
    expect(await snapshot(id)).toEqual(before);
  });

  it('snoozes until a future time; the job that ends it opens the thread, with an activity line', async () => {
    const id = await newThread();
    const until = new Date(Date.now() + 3_600_000);
    const res = await patch(id, { status: 'snoozed', snoozedUntil: until.toISOString() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'snoozed', snoozedUntil: until.toISOString() });
    const { rows } = await sql<{ data: { threadId: number }; start_after: Date }>`
      SELECT data, start_after FROM pgboss.job WHERE name = ${SNOOZE_QUEUE} AND (data->>'threadId')::bigint = ${id}`.execute(ctx.deps.db);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.start_after.toISOString()).toBe(until.toISOString());

    // Run early (a clock behind the database's), the job changes nothing.
    await snoozeQueue.worker!.handle(ctx.deps, [{ id: 'early', data: rows[0]!.data }]);
    expect((await threadRow(id)).status).toBe('snoozed');
    // When the time has come, it opens the thread.
    const later = { ...ctx.deps, now: () => new Date(until.getTime() + 1000) };
    await snoozeQueue.worker!.handle(later, [{ id: 'due', data: rows[0]!.data }]);
    expect(await threadRow(id)).toMatchObject({ status: 'open', snoozed_until: null });
    expect((await transcriptLines(ctx, id)).map((l) => l.text)).toEqual([
      `Ada snoozed the conversation until ${until.toISOString()}`,
      SNOOZE_ENDED,
    ]);
    await waitFor(
      async () => bus.find((e) => e.type === 'thread.updated' && e.data.id === id && e.data.status === 'open'),
      'the wake-up on the bus',
    );
    // A duplicate job finds nothing to do.
    await snoozeQueue.worker!.handle(later, [{ id: 'dup', data: rows[0]!.data }]);
    expect(await transcriptLines(ctx, id)).toHaveLength(2);
  });

  it('the minutely sweep ends any snooze that is due, and only those', async () => {
    const due = await newThread();
    const notYet = await newThread();
    const now = Date.now();
    await patch(due, { status: 'snoozed', snoozedUntil: new Date(now + 60_000).toISOString() });
    await patch(notYet, { status: 'snoozed', snoozedUntil: new Date(now + 3_600_000).toISOString() });
    // A sweep queued by a schedule made without data (0.2.0's) has null data.
    await snoozeQueue.worker!.handle({ ...ctx.deps, now: () => new Date(now + 120_000) }, [
      { id: 'sweep', data: null as unknown as SnoozeJob },
    ]);
    expect((await threadRow(due)).status).toBe('open');
    expect((await threadRow(notYet)).status).toBe('snoozed');
  });

  it('snoozes until the last second of the year 9999', async () => {
    const id = await newThread();
    const res = await patch(id, { status: 'snoozed', snoozedUntil: '9999-12-31T23:59:59+00:00' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'snoozed', snoozedUntil: '9999-12-31T23:59:59.000Z' });
  });

  it('leaving snoozed clears snoozedUntil; snoozing again moves it', async () => {
    const id = await newThread();
    await patch(id, { status: 'snoozed', snoozedUntil: new Date(Date.now() + 60_000).toISOString() });
    const later = new Date(Date.now() + 7_200_000).toISOString();
    expect((await patch(id, { snoozedUntil: later })).json().data).toMatchObject({ status: 'snoozed', snoozedUntil: later });
    expect((await patch(id, { status: 'resolved' })).json().data).toMatchObject({ status: 'resolved', snoozedUntil: null });
  });

  it('refuses bad input with 422 in the error envelope, and writes nothing', async () => {
    const id = await newThread();
    await patch(id, { labels: ['keep'] });
    const before = await snapshot(id);
    const cases: [string, unknown][] = [
      ['a past snoozedUntil', { status: 'snoozed', snoozedUntil: new Date(Date.now() - 1000).toISOString() }],
      ['snoozed without snoozedUntil', { status: 'snoozed' }],
      ['snoozedUntil without snoozed', { status: 'resolved', snoozedUntil: new Date(Date.now() + 60_000).toISOString() }],
      ['snoozedUntil on an open thread', { snoozedUntil: new Date(Date.now() + 60_000).toISOString() }],
      ['snoozedUntil that is no time', { status: 'snoozed', snoozedUntil: 'tomorrow' }],
      // The last day of 9999 read with its offset is a day of the year 10000.
      ['snoozedUntil past the year 9999', { status: 'snoozed', snoozedUntil: '9999-12-31T23:59:59-14:00' }],
      ['an unknown assignee', { assigneeId: 2_000_000_000 }],
      ["another workspace's user", { assigneeId: stranger.user.id }],
      ['a label with a space', { labels: ['not ok'] }],
      ['a label too long', { labels: ['x'.repeat(51)] }],
      ['an empty label', { labels: [''] }],
      ['21 labels', { labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }],
      ['a label that is no string', { labels: [7] }],
      ['an unknown status', { status: 'closed' }],
      ['an unknown field', { status: 'resolved', colour: 'red' }],
      ['an empty patch', {}],
    ];
    for (const [what, payload] of cases) {
      const res = await patch(id, payload);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(422);
      expect(res.json(), what).toEqual({
        error: { code: 'validation_failed', message: expect.any(String) },
        meta: { requestId: expect.any(String) },
      });
    }
    // An assignee of another workspace is refused in the same words as one that does not exist.
    expect((await patch(id, { assigneeId: stranger.user.id })).json().error.message).toBe(
      (await patch(id, { assigneeId: 2_000_000_000 })).json().error.message,
    );
    expect(await snapshot(id)).toEqual(before);
  });

  it('a read key may not change a thread (403)', async () => {
    const id = await newThread();
    const key = await issueApiKey(ctx.deps.db, tenant.workspace.id, 'reader', ['read']);
    expect((await patch(id, { status: 'resolved' }, { 'x-api-key': key.key })).statusCode).toBe(403);
    expect((await ctx.app.inject({ method: 'POST', url: `/v1/threads/${id}/read`, headers: { 'x-api-key': key.key } })).statusCode).toBe(
      403,
    );
    expect((await threadRow(id)).status).toBe('open');
  });
});

describe('POST /v1/threads/:id/read and unreadCount', () => {
  it('counts inbound messages since an agent last read the thread', async () => {
    const id = await newThread();
    await inbound(ctx, connection, `contact-${seq}`, `wamid.wf-${seq}-b`, 'second');
    expect((await getThread(id)).unreadCount).toBe(2);
    const res = await ctx.app.inject({ method: 'POST', url: `/v1/threads/${id}/read`, headers: bo.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id, unreadCount: 0, agentLastSeenAt: expect.any(String) });
    await waitFor(
      async () => bus.find((e) => e.type === 'thread.updated' && e.data.id === id && e.data.unreadCount === 0),
      'the read on the bus',
    );
    // Notes and activity are never unread; a new inbound message is.
    await patch(id, { status: 'pending' });
    await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${id}/messages`,
      headers: ada.headers,
      payload: { text: 'for Bo', private: true },
    });
    expect((await getThread(id)).unreadCount).toBe(0);
    await inbound(ctx, connection, `contact-${seq}`, `wamid.wf-${seq}-c`, 'third');
    expect((await getThread(id)).unreadCount).toBe(1);
    expect(await transcriptLines(ctx, id)).toHaveLength(3); // pending, the note, the reopening
  });
});

describe('a new inbound message on a thread that is not open', () => {
  it.each(['resolved', 'pending', 'snoozed'] as const)(
    'reopens a %s thread (the same thread), with an activity line and thread.updated',
    async (status) => {
      const id = await newThread();
      const from = `contact-${seq}`;
      await patch(id, status === 'snoozed' ? { status, snoozedUntil: new Date(Date.now() + 60_000).toISOString() } : { status });
      const again = await inbound(ctx, connection, from, `wamid.wf-${seq}-again`, 'me again');
      expect(again).toBe(id);
      expect(await threadRow(id)).toMatchObject({ status: 'open', snoozed_until: null });
      expect((await transcriptLines(ctx, id)).at(-1)).toMatchObject({ kind: 'activity', text: REOPENED_BY_MESSAGE, author_id: null });
      await waitFor(
        async () =>
          bus.find(
            (e) => e.type === 'thread.updated' && e.data.id === id && e.data.status === 'open' && (e.data.unreadCount as number) === 2,
          ),
        'the reopening on the bus',
      );
    },
  );

  it("a provider's retry of a message already stored reopens nothing and is not unread twice", async () => {
    const id = await newThread();
    await patch(id, { status: 'resolved' });
    await inbound(ctx, connection, `contact-${seq}`, `wamid.wf-${seq}`, `hello ${seq}`);
    expect(await threadRow(id)).toMatchObject({ status: 'resolved', unread_count: 1 });
    // The same message twice in one batch counts once too.
    const twice = {
      deliveryId: 'twice',
      integrationKey: connection.integrationKey,
      events: [0, 1].map(() => ({
        type: 'message' as const,
        externalAccountId: connection.externalAccountId,
        externalMessageId: `wamid.wf-${seq}-twice`,
        contact: { externalId: `contact-${seq}` },
        text: 'again',
      })),
    };
    await ctx.deps.db
      .transaction()
      .execute((trx) => applyDeliveries(ctx.deps, trx, [twice, { ...twice, deliveryId: 'twice-2' }], new Date()));
    expect(await threadRow(id)).toMatchObject({ status: 'open', unread_count: 2 });
    expect((await getThread(id)).unreadCount).toBe(2);
  });
});

describe('another workspace', () => {
  it('its thread is not_found on every route of the workflow, and nothing changes', async () => {
    const foreign = await inbound(ctx, otherConnection, 'foreign-contact', 'wamid.foreign-1');
    const before = await threadRow(foreign);
    const routes = [
      { method: 'PATCH' as const, url: `/v1/threads/${foreign}`, payload: { status: 'resolved' } },
      { method: 'POST' as const, url: `/v1/threads/${foreign}/read` },
      { method: 'POST' as const, url: `/v1/threads/${foreign}/messages`, payload: { text: 'note', private: true } },
    ];
    for (const headers of [ada.headers, tenant.headers]) {
      for (const route of routes) {
        const res = await ctx.app.inject({ ...route, headers });
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(404);
        expect(res.json().error.code).toBe('not_found');
      }
    }
    expect(await threadRow(foreign)).toEqual(before);
    expect(await transcriptLines(ctx, foreign)).toHaveLength(0);
  });
});
