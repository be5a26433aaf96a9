import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { autoAssignedLine, SNOOZE_ENDED } from '../../src/threads/activity.js';
import { wakeThreads } from '../../src/threads/snooze.queue.js';
import { lockAssignment } from '../../src/threads/thread-workflow.queries.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus, signedInUser, transcriptLines } from './workflow-helpers.js';

const ctx = await useTestContext();
const bus = await listenToBus(ctx.database.url);

type Headers = Record<string, string>;

async function call(method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, headers: Headers, payload?: object) {
  const res = await ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

/**
 * A workspace with a routing team of the given members (signed in, created in order so ids
 * ascend) on a connection whose new threads start in that team; plus one non-member.
 */
async function routingTeam(names: string[]) {
  const tenant = await makeTenant(ctx.deps);
  const users: Record<string, Awaited<ReturnType<typeof signedInUser>>> = {};
  for (const name of names) users[name] = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name, roles: ['agent'] });
  const outsider = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Out', roles: ['agent'] });
  const team = await call('POST', '/v1/teams', tenant.headers, { name: 'Support', autoAssign: true });
  expect(team.autoAssign).toBe(true);
  await call('PUT', `/v1/teams/${team.id}/members`, tenant.headers, { userIds: names.map((n) => users[n]!.user.id) });
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { teamId: team.id });
  let n = 0;
  const newThread = () => {
    n += 1;
    return inbound(ctx, connection, `c-${tenant.workspace.id}-${n}`, `m-${tenant.workspace.id}-${n}`);
  };
  return { tenant, users, outsider, team, connection, newThread };
}

const assigneeOf = async (threadId: number) =>
  (await ctx.deps.db.selectFrom('threads').select('assignee_id').where('id', '=', threadId).executeTakeFirstOrThrow()).assignee_id;
const setMe = (headers: Headers, payload: object) => call('PATCH', '/v1/users/me', headers, payload);

describe('routing', () => {
  it('gives a team thread to an online member under their cap: fewest open, then least recently given one, then lowest id', async () => {
    const { tenant, users, outsider, newThread } = await routingTeam(['Ada', 'Bo', 'Cy', 'Dee']);
    const [ada, bo, cy, dee] = ['Ada', 'Bo', 'Cy', 'Dee'].map((n) => users[n]!);
    await setMe(cy!.headers, { availability: 'busy' });
    await call('PATCH', `/v1/users/${dee!.user.id}`, tenant.headers, { maxOpenThreads: 0 });
    // Candidates: Ada and Bo (Cy is busy, Dee at her cap of 0, Out not a member). Neither
    // was ever given a thread: the lowest id.
    const t1 = await newThread();
    expect(await assigneeOf(t1)).toBe(ada!.user.id);
    expect((await transcriptLines(ctx, t1)).map((l) => [l.text, l.author_id])).toEqual([[autoAssignedLine('Ada'), null]]);
    expect(autoAssignedLine('Ada')).toBe('Assigned to Ada by routing');
    // Bo has fewer open threads.
    const t2 = await newThread();
    expect(await assigneeOf(t2)).toBe(bo!.user.id);
    // 1 and 1: Ada was given hers longer ago.
    const t3 = await newThread();
    expect(await assigneeOf(t3)).toBe(ada!.user.id);
    // Ada resolves both of hers: 0 against Bo's 1.
    for (const t of [t1, t3]) await call('PATCH', `/v1/threads/${t}`, ada!.headers, { status: 'resolved' });
    const t4 = await newThread();
    expect(await assigneeOf(t4)).toBe(ada!.user.id);
    // An outsider or a busy member never got one.
    const assignees = await Promise.all([t1, t2, t3, t4].map(assigneeOf));
    expect(assignees).not.toContain(outsider.user.id);
    expect(assignees).not.toContain(cy!.user.id);
    expect(assignees).not.toContain(dee!.user.id);
  });

  it('routes a thread of a connection with autoAssign and no team to anyone online; without autoAssign nothing is routed', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['admin'] });
    const bo = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Bo', roles: [] });
    await setMe(ada.headers, { availability: 'offline' });
    const plain = await makeConnection(ctx.deps, tenant.workspace.id);
    expect(await assigneeOf(await inbound(ctx, plain, 'p-1', `p-1-${tenant.workspace.id}`))).toBeNull();
    const routed = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${routed.id}`, tenant.headers, { autoAssign: true });
    expect(await assigneeOf(await inbound(ctx, routed, 'r-1', `r-1-${tenant.workspace.id}`))).toBe(bo.user.id);
    // Turning autoAssign on routes the connection's threads that wait already.
    const waiting = await inbound(ctx, plain, 'p-2', `p-2-${tenant.workspace.id}`);
    await call('PATCH', `/v1/connections/${plain.id}`, tenant.headers, { autoAssign: true });
    expect(await assigneeOf(waiting)).toBe(bo.user.id);
  });

  it('keeps a thread nobody may take waiting, and assigns the oldest waiting ones when someone goes online', async () => {
    const { tenant, users, newThread } = await routingTeam(['Ada', 'Bo']);
    const [ada, bo] = [users.Ada!, users.Bo!];
    await setMe(ada.headers, { availability: 'offline' });
    await setMe(bo.headers, { availability: 'busy' });
    const older = await newThread();
    const newer = await newThread();
    expect(await assigneeOf(older)).toBeNull();
    expect(await assigneeOf(newer)).toBeNull();
    expect(await transcriptLines(ctx, older)).toEqual([]);

    await call('PATCH', `/v1/users/${bo.user.id}`, tenant.headers, { maxOpenThreads: 1 });
    expect(await assigneeOf(older)).toBeNull(); // a cap alone frees nobody who is busy
    const me = await setMe(bo.headers, { availability: 'online' });
    expect(me).toMatchObject({ id: bo.user.id, availability: 'online', maxOpenThreads: 1 });
    // In the change's own transaction: assigned by the time the answer came back. Bo's cap
    // is 1: the oldest is his, the newer one waits on.
    expect(await assigneeOf(older)).toBe(bo.user.id);
    expect(await assigneeOf(newer)).toBeNull();
    expect((await transcriptLines(ctx, older)).map((l) => l.text)).toEqual([autoAssignedLine('Bo')]);
    await waitFor(
      async () => bus.some((e) => e.type === 'thread.updated' && e.data.id === older && e.data.assigneeId === bo.user.id),
      'thread.updated',
    );
    await waitFor(
      async () => bus.some((e) => e.type === 'user.updated' && e.data.id === bo.user.id && e.data.availability === 'online'),
      'user.updated',
    );

    // Ada comes online: the newer one is hers.
    await setMe(ada.headers, { availability: 'online' });
    expect(await assigneeOf(newer)).toBe(ada.user.id);
  });

  it('never hands out a waiting thread of a deleted connection, which nobody can answer', async () => {
    const { tenant, users, team, newThread } = await routingTeam(['Bo']);
    const bo = users.Bo!;
    await setMe(bo.headers, { availability: 'busy' });
    await call('PATCH', `/v1/users/${bo.user.id}`, tenant.headers, { maxOpenThreads: 1 });
    const gone = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${gone.id}`, tenant.headers, { teamId: team.id });
    const orphan = await inbound(ctx, gone, `c-${tenant.workspace.id}-gone`, `m-${tenant.workspace.id}-gone`);
    const live = await newThread();
    const deleted = await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${gone.id}`, headers: tenant.headers });
    expect(deleted.statusCode, deleted.body).toBe(200);

    // The orphan is older, yet Bo's one free place goes to the thread that can be answered.
    await setMe(bo.headers, { availability: 'online' });
    expect(await assigneeOf(live)).toBe(bo.user.id);
    expect(await assigneeOf(orphan)).toBeNull();
  });

  it('routes a waiting thread when its contact writes again and someone may take it', async () => {
    const { users, connection } = await routingTeam(['Ada']);
    const ada = users.Ada!;
    await setMe(ada.headers, { availability: 'offline' });
    const t = await inbound(ctx, connection, 'again', `again-1-${ada.user.id}`);
    expect(await assigneeOf(t)).toBeNull();
    // Ada is online without the change that routes (as when that change found the thread
    // held by a batch and passed it over): the next message routes it.
    await ctx.deps.db.updateTable('users').set({ availability: 'online' }).where('id', '=', ada.user.id).execute();
    expect(await inbound(ctx, connection, 'again', `again-2-${ada.user.id}`)).toBe(t);
    expect(await assigneeOf(t)).toBe(ada.user.id);
  });

  it('assigns a waiting thread when an assignee resolves one, hands one to someone else, or has their cap raised', async () => {
    const { tenant, users, newThread } = await routingTeam(['Ada', 'Bo']);
    const [ada, bo] = [users.Ada!, users.Bo!];
    for (const u of [ada, bo]) await call('PATCH', `/v1/users/${u.user.id}`, tenant.headers, { maxOpenThreads: 1 });
    const a1 = await newThread();
    const b1 = await newThread();
    expect([await assigneeOf(a1), await assigneeOf(b1)]).toEqual([ada.user.id, bo.user.id]);
    const w1 = await newThread();
    const w2 = await newThread();
    const w3 = await newThread();
    expect(await assigneeOf(w1)).toBeNull();

    // Resolved: Ada takes the oldest waiting thread.
    await call('PATCH', `/v1/threads/${a1}`, ada.headers, { status: 'resolved' });
    expect(await assigneeOf(w1)).toBe(ada.user.id);
    expect(await assigneeOf(w2)).toBeNull();

    // Reassigned away from Bo (to an admin outside routing's count, by hand): Bo takes w2.
    await call('PATCH', `/v1/threads/${b1}`, bo.headers, { assigneeId: ada.user.id });
    expect(await assigneeOf(w2)).toBe(bo.user.id);

    // The cap raised: Ada (now 2 open, cap 1) takes nothing until it is 3.
    expect(await assigneeOf(w3)).toBeNull();
    await call('PATCH', `/v1/users/${ada.user.id}`, tenant.headers, { maxOpenThreads: 3 });
    expect(await assigneeOf(w3)).toBe(ada.user.id);
  });
  it('routes an unassigned thread whose snooze ends when someone may take it', async () => {
    const { tenant, users, newThread } = await routingTeam(['Ada']);
    const ada = users.Ada!;
    await setMe(ada.headers, { availability: 'offline' });
    const t = await newThread();
    const until = new Date(Date.now() + 3_600_000).toISOString();
    await call('PATCH', `/v1/threads/${t}`, tenant.headers, { status: 'snoozed', snoozedUntil: until });
    // Ada comes back while it sleeps: a snoozed thread is not in the queue.
    await setMe(ada.headers, { availability: 'online' });
    expect(await assigneeOf(t)).toBeNull();
    // The snooze ends (its time moved into the past, then its job runs): open again and
    // without an assignee, it is routed in the same transaction.
    await ctx.deps.db
      .updateTable('threads')
      .set({ snoozed_until: new Date(Date.now() - 1000) })
      .where('id', '=', t)
      .execute();
    expect(await wakeThreads(ctx.deps, [t])).toBe(1);
    expect(await assigneeOf(t)).toBe(ada.user.id);
    expect((await transcriptLines(ctx, t)).map((l) => l.text).slice(-2)).toEqual([SNOOZE_ENDED, autoAssignedLine('Ada')]);
  });
});

describe('routing and other changes of users', () => {
  it('an admin changing an admin while a batch routes to them: both go through, no deadlock', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['admin'] });
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { autoAssign: true });
    let go!: () => void;
    const gate = new Promise<void>((resolve) => {
      go = resolve;
    });
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // A batch holds the routing lock first...
    const batch = ctx.deps.db.transaction().execute(async (trx) => {
      await lockAssignment(trx, [tenant.workspace.id]);
      locked();
      await gate;
      // ...and, once the change below waits for that lock, assigns Ada a thread.
      await applyDeliveries(
        ctx.deps,
        trx,
        [
          {
            deliveryId: `dl-${tenant.workspace.id}`,
            integrationKey: connection.integrationKey,
            events: [
              {
                type: 'message',
                externalAccountId: connection.externalAccountId,
                externalMessageId: `dl-${tenant.workspace.id}`,
                contact: { externalId: 'dl' },
                text: 'hi',
              },
            ],
          },
        ],
        new Date(),
      );
    });
    await holding;
    // The change locks the admins, then waits for the routing lock (a raised cap routes).
    const change = ctx.app.inject({
      method: 'PATCH',
      url: `/v1/users/${ada.user.id}`,
      headers: tenant.headers,
      payload: { maxOpenThreads: 5 },
    });
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(
        ctx.deps.db,
      );
      return rows[0]!.n > 0;
    }, 'the change to wait for the routing lock');
    go();
    // Locking the admins FOR UPDATE made this a deadlock (Postgres aborted one of the two).
    await batch;
    expect((await change).statusCode).toBe(200);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM threads WHERE assignee_id = ${ada.user.id}`.execute(
      ctx.deps.db,
    );
    expect(rows[0]!.n).toBe(1);
  });
});

describe('routing across api processes', () => {
  it('never passes a cap when two processes route at once', async () => {
    // A second api process with a pool of its own on the same database.
    const other = await startTestContext({ database: ctx.database });
    try {
      const { tenant, users, connection } = await routingTeam(['Bo']);
      const bo = users.Bo!;
      await call('PATCH', `/v1/users/${bo.user.id}`, tenant.headers, { maxOpenThreads: 1 });
      const delivery = (id: string) => ({
        deliveryId: id,
        integrationKey: connection.integrationKey,
        events: [
          {
            type: 'message' as const,
            externalAccountId: connection.externalAccountId,
            externalMessageId: id,
            contact: { externalId: id },
            text: 'hi',
          },
        ],
      });
      // Process one routes a thread to Bo and holds its transaction open.
      let commitFirst!: () => void;
      const held = new Promise<void>((resolve) => {
        commitFirst = resolve;
      });
      let routedFirst!: () => void;
      const firstRouted = new Promise<void>((resolve) => {
        routedFirst = resolve;
      });
      const first = ctx.deps.db.transaction().execute(async (trx) => {
        await applyDeliveries(ctx.deps, trx, [delivery(`x-1-${tenant.workspace.id}`)], new Date());
        routedFirst();
        await held;
      });
      await firstRouted;
      // Process two routes another while the first has not committed. With the routing lock
      // it waits for the first and then counts Bo's thread. Without it (checked by deleting
      // the lockAssignment call of routeThreads) it counts 0 and gives Bo a second thread: this
      // test then fails with 2 open threads for a cap of 1.
      let secondDone = false;
      const second = other.deps.db
        .transaction()
        .execute((trx) => applyDeliveries(other.deps, trx, [delivery(`x-2-${tenant.workspace.id}`)], new Date()))
        .finally(() => {
          secondDone = true;
        });
      await waitFor(async () => {
        if (secondDone) return true;
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(ctx.deps.db);
        return rows[0]!.n > 0;
      }, 'the second process to wait for a lock the first holds, or to finish');
      commitFirst();
      await Promise.all([first, second]);
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM threads WHERE assignee_id = ${bo.user.id} AND status = 'open'`.execute(ctx.deps.db);
      expect(rows[0]!.n).toBe(1);
      const waiting = await ctx.deps.db
        .selectFrom('threads')
        .select('id')
        .where('workspace_id', '=', tenant.workspace.id)
        .where('assignee_id', 'is', null)
        .execute();
      expect(waiting).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});
