import { describe, expect, it } from 'vitest';
import { autoAssignedLine } from '../../src/threads/activity.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus, signedInUser, transcriptLines } from '../threads/workflow-helpers.js';

/**
 * `assigned` for what routing hands out outside an inbound batch (docs/teams.md): when a user
 * goes online, or a thread of theirs is resolved or reassigned, the waiting threads routed to
 * them each tell them, naming routing's activity line and no actor.
 */
const ctx = await useTestContext();
const bus = await listenToBus(ctx.database.url);
type Headers = Record<string, string>;

async function call(method: 'PATCH' | 'POST' | 'PUT', url: string, headers: Headers, payload: object) {
  const res = await ctx.app.inject({ method, url, headers, payload });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

async function routingTeam(names: string[]) {
  const tenant = await makeTenant(ctx.deps);
  const users: Awaited<ReturnType<typeof signedInUser>>[] = [];
  for (const name of names) users.push(await signedInUser(ctx.app, ctx, tenant.workspace.id, { name, roles: ['agent'] }));
  const team = await call('POST', '/v1/teams', tenant.headers, { name: 'Support', autoAssign: true });
  await call('PUT', `/v1/teams/${team.id}/members`, tenant.headers, { userIds: users.map((u) => u.user.id) });
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { teamId: team.id });
  let n = 0;
  const newThread = () => {
    n += 1;
    return inbound(ctx, connection, `c-${tenant.workspace.id}-${n}`, `m-${tenant.workspace.id}-${n}`);
  };
  return { tenant, users, newThread };
}

const notificationsOf = (userId: number) =>
  ctx.deps.db.selectFrom('notifications').selectAll().where('user_id', '=', userId).where('type', '=', 'assigned').orderBy('id').execute();
const assigneeOf = async (threadId: number) =>
  (await ctx.deps.db.selectFrom('threads').select('assignee_id').where('id', '=', threadId).executeTakeFirstOrThrow()).assignee_id;

/** The user's `assigned` notification for the thread names routing's line in it and no actor. */
async function expectRoutedTo(user: { id: number; name: string }, threadId: number) {
  const rows = (await notificationsOf(user.id)).filter((n) => n.thread_id === threadId);
  expect(rows).toMatchObject([{ type: 'assigned', thread_id: threadId, actor_id: null }]);
  const [line] = (await transcriptLines(ctx, threadId)).filter((l) => l.text === autoAssignedLine(user.name));
  expect(rows[0]!.message_id).toBe(line!.id);
  await waitFor(
    async () =>
      bus.some((e) => e.type === 'notification.created' && e.targetUserId === user.id && (e.data as { id: number }).id === rows[0]!.id),
    'notification.created for the routed thread',
  );
}

describe('assigned by routing outside an inbound batch', () => {
  it('tells a user who goes online of each waiting thread routed to them', async () => {
    const { users, newThread } = await routingTeam(['Ada']);
    const [ada] = users;
    await call('PATCH', '/v1/users/me', ada!.headers, { availability: 'offline' });
    const waiting = [await newThread(), await newThread()];
    expect(await notificationsOf(ada!.user.id)).toEqual([]);
    await call('PATCH', '/v1/users/me', ada!.headers, { availability: 'online' });
    for (const t of waiting) await expectRoutedTo(ada!.user, t);
    expect(await notificationsOf(ada!.user.id)).toHaveLength(2);
  });

  it('tells the assignee freed by a resolve, and by a reassignment, of the waiting thread they got', async () => {
    const { tenant, users, newThread } = await routingTeam(['Ada', 'Bo']);
    const [ada, bo] = users;
    for (const u of users) await call('PATCH', `/v1/users/${u.user.id}`, tenant.headers, { maxOpenThreads: 1 });
    const first = await newThread();
    const second = await newThread();
    expect([await assigneeOf(first), await assigneeOf(second)]).toEqual([ada!.user.id, bo!.user.id]);
    const waiting = await newThread();
    const later = await newThread();
    expect([await assigneeOf(waiting), await assigneeOf(later)]).toEqual([null, null]);

    // Ada resolves hers: the oldest waiting thread is routed to her in that change.
    await call('PATCH', `/v1/threads/${first}`, ada!.headers, { status: 'resolved' });
    expect(await assigneeOf(waiting)).toBe(ada!.user.id);
    await expectRoutedTo(ada!.user, waiting);

    // An API key gives Bo's thread to Ada (over her cap, by hand): Bo is freed and routed the
    // next one. Ada is told once, of the hand assignment, by the existing rule.
    await call('PATCH', `/v1/threads/${second}`, tenant.headers, { assigneeId: ada!.user.id });
    expect(await assigneeOf(later)).toBe(bo!.user.id);
    await expectRoutedTo(bo!.user, later);
    expect((await notificationsOf(ada!.user.id)).filter((n) => n.thread_id === second)).toMatchObject([{ actor_id: null }]);
    expect((await notificationsOf(ada!.user.id)).map((n) => n.thread_id)).toEqual([first, waiting, second]);
  });

  it('routes the waiting threads to a user added with a password, who is online from the start', async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { autoAssign: true });
    const waiting = await inbound(ctx, connection, `c-new-${tenant.workspace.id}`, `m-new-${tenant.workspace.id}`);
    expect(await assigneeOf(waiting)).toBeNull();
    const email = `cy-${tenant.workspace.id}@example.test`;
    const cy = await call('POST', '/v1/users', tenant.headers, { name: 'Cy', email, password: 'a-long-password-1', roles: ['agent'] });
    expect(await assigneeOf(waiting)).toBe(cy.id);
    await expectRoutedTo(cy, waiting);
  });

  it('routes the waiting threads to a user the operator adds, and to one who says online again', async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { autoAssign: true });
    const first = await inbound(ctx, connection, `c-op-${tenant.workspace.id}`, `m-op-${tenant.workspace.id}`);
    expect(await assigneeOf(first)).toBeNull();
    const added = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/users`,
      headers: adminHeaders(),
      payload: { name: 'Dee', email: `dee-${tenant.workspace.id}@example.test`, password: 'a-long-password-1', roles: ['agent'] },
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(await assigneeOf(first)).toBe(added.json().data.id);

    // A user made outside any route (as the CLI makes them) is online, but nothing routed to
    // them; saying `online` again does.
    await call('PATCH', `/v1/users/${added.json().data.id}`, tenant.headers, { maxOpenThreads: 1 });
    const second = await inbound(ctx, connection, `c-op2-${tenant.workspace.id}`, `m-op2-${tenant.workspace.id}`);
    const eve = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Eve', roles: ['agent'] });
    expect(await assigneeOf(second)).toBeNull();
    expect((await call('PATCH', '/v1/users/me', eve.headers, { availability: 'online' })).availability).toBe('online');
    expect(await assigneeOf(second)).toBe(eve.user.id);
    await expectRoutedTo(eve.user, second);
  });

  it('routes the waiting thread to the assignee a contact merge frees, folding their open thread away', async () => {
    const { tenant, users, newThread } = await routingTeam(['Ada', 'Bo']);
    const [ada, bo] = users;
    for (const u of users) await call('PATCH', `/v1/users/${u.user.id}`, tenant.headers, { maxOpenThreads: 1 });
    const kept = await newThread();
    const folded = await newThread();
    const waiting = await newThread();
    expect([await assigneeOf(kept), await assigneeOf(folded), await assigneeOf(waiting)]).toEqual([ada!.user.id, bo!.user.id, null]);
    const contactOf = async (id: number) =>
      (await ctx.deps.db.selectFrom('threads').select('contact_id').where('id', '=', id).executeTakeFirstOrThrow()).contact_id;
    // The same person wrote from two handles: merged, Bo's thread folds into Ada's and is gone.
    await call('POST', `/v1/contacts/${await contactOf(kept)}/merge`, tenant.headers, { contactId: await contactOf(folded) });
    expect(await ctx.deps.db.selectFrom('threads').select('id').where('id', '=', folded).executeTakeFirst()).toBeUndefined();
    expect(await assigneeOf(waiting)).toBe(bo!.user.id);
    await expectRoutedTo(bo!.user, waiting);
  });
});
