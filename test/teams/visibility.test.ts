import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { SLA_CLOCK_QUEUE, type SlaClockJob } from '../../src/sla/sla-clock.enqueue.js';
import { tellSlaMoment } from '../../src/sla/sla-clock.queue.js';
import { useTestContext } from '../helpers/app.js';
import { someBytes, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';
import { signedInUser } from '../threads/workflow-helpers.js';

// Who sees what (docs/teams.md): with restrictAgentsToTeams, an agent sees the threads of their
// teams, of no team and assigned to them; any other thread does not exist for them.

// Every route the app registers (test/helpers/route-log.ts), so a thread route added later is
// walked without anyone listing it here.
const { routes, fastifyWithRouteLog } = await vi.hoisted(() => import('../helpers/route-log.js'));
vi.mock('fastify', fastifyWithRouteLog);

const ctx = await useTestContext();
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const ada = await signedInUser(ctx.app, ctx, ws, { name: 'Ada', roles: ['admin'] });
const bo = await signedInUser(ctx.app, ctx, ws, { name: 'Bo', roles: ['agent'] });

type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const ok = async (method: Method, url: string, headers: Record<string, string>, payload?: object) => {
  const res = await call(method, url, headers, payload);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json().data;
};
const setRestricted = (on: boolean) => ok('PATCH', '/v1/workspace', tenant.headers, { restrictAgentsToTeams: on });

const billing = await ok('POST', '/v1/teams', tenant.headers, { name: 'Billing' });
const returns = await ok('POST', '/v1/teams', tenant.headers, { name: 'Returns' });
await ok('PUT', `/v1/teams/${billing.id}/members`, tenant.headers, { userIds: [bo.user.id] });

const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
/** A thread with a message (carrying `kumquat` and an attachment) and the label `vip`. */
async function thread(teamId: number | null, assigneeId: number | null = null) {
  const row = await seedThread(ctx.deps, line, { labels: ['vip'], assigneeId });
  await db.updateTable('threads').set({ team_id: teamId }).where('id', '=', row.id).execute();
  const message = await seedMessage(ctx.deps, row, `kumquat in thread ${row.id}`);
  await db.updateTable('messages').set({ html: '<p>kumquat</p>' }).where('id', '=', message.id).execute();
  const attachmentId = await storeUpload(ctx.deps, ws, { bytes: someBytes(), contentType: 'image/png', kind: 'image' });
  await db.updateTable('attachments').set({ message_id: message.id }).where('id', '=', attachmentId).execute();
  return { id: row.id, messageId: message.id, attachmentId };
}
/** A shared macro, so the route that runs one on a thread is walked with a macro that exists. */
const macro = await ok('POST', '/v1/macros', ada.headers, {
  name: 'Tag it',
  actions: [{ type: 'add_labels', labels: ['tagged'] }],
  shared: true,
});
const mine = await thread(billing.id);
const noTeam = await thread(null);
const assigned = await thread(returns.id, bo.user.id);
const theirs = await thread(returns.id);
await setRestricted(true);

/** The ids a route addresses, by the first segments of its path. */
const SCOPED: { prefix: string; id: (t: typeof mine) => number }[] = [
  { prefix: '/v1/threads/:id', id: (t) => t.id },
  { prefix: '/v1/attachments/:id', id: (t) => t.attachmentId },
  { prefix: '/v1/messages/:id', id: (t) => t.messageId },
];
/**
 * Routes a signed link opens (no credential: the signature is the permission, and it is only
 * given to a caller who sees the thread, by a route walked here).
 */
const SIGNED_LINKS = ['/v1/messages/:id/html'];
/** A body each route accepts, so that what it answers is about the thread, not the body. */
const BODIES: Record<string, object> = {
  'PATCH /v1/threads/:id': { status: 'open' },
  'POST /v1/threads/:id/messages': { text: 'a note', private: true },
};
/** Visible, and still refused for what the thread is (a WhatsApp thread has no visitor to block). */
const SEEN_BUT_REFUSED: Record<string, number> = {
  'POST /v1/threads/:id/block-visitor': 422,
  // AI assist is off in this workspace: the thread is seen, the call refused.
  'POST /v1/threads/:id/ai/suggest-reply': 409,
  'POST /v1/threads/:id/ai/summarize': 409,
};

const scopedRoutes = () =>
  routes.filter(
    (r) =>
      SCOPED.some((s) => r.url === s.prefix || r.url.startsWith(`${s.prefix}/`)) &&
      r.url.startsWith('/v1/') &&
      !SIGNED_LINKS.includes(r.url),
  );

async function walk(t: typeof mine, headers: Record<string, string>) {
  const answers: { route: string; status: number; code?: string }[] = [];
  for (const route of scopedRoutes()) {
    const key = `${route.method} ${route.url}`;
    const scope = SCOPED.find((s) => route.url.startsWith(s.prefix))!;
    const url = route.url.replace(':id', String(scope.id(t))).replace(':macroId', String(macro.id));
    const res = await call(
      route.method as Method,
      url,
      headers,
      route.method === 'GET' || route.method === 'HEAD' ? undefined : (BODIES[key] ?? {}),
    );
    const json = route.method !== 'HEAD' && String(res.headers['content-type']).startsWith('application/json');
    answers.push({ route: key, status: res.statusCode, code: json ? res.json().error?.code : undefined });
  }
  return answers;
}

const listIds = async (headers: Record<string, string>, query = '') =>
  ((await ok('GET', `/v1/threads?limit=100${query}`, headers)) as { id: number }[]).map((t) => t.id).sort((a, b) => a - b);
const all = [mine, noTeam, assigned, theirs].map((t) => t.id).sort((a, b) => a - b);
const visible = [mine, noTeam, assigned].map((t) => t.id).sort((a, b) => a - b);

describe('restrictAgentsToTeams on every thread route', () => {
  it("answers 404 to an agent on another team's thread on every route, and serves their own", async () => {
    const walked = scopedRoutes().map((r) => `${r.method} ${r.url}`);
    for (const route of [
      'GET /v1/threads/:id',
      'PATCH /v1/threads/:id',
      'GET /v1/threads/:id/messages',
      'POST /v1/threads/:id/messages',
      'POST /v1/threads/:id/read',
      'GET /v1/attachments/:id',
      'GET /v1/attachments/:id/content',
    ])
      expect(walked).toContain(route);
    // A route naming a thread, a message or an attachment by id must be one walked here.
    const byId = routes.filter((r) => r.url.startsWith('/v1/') && /(thread|message|attachment)s?\/:/.test(r.url));
    const outside = byId.filter(
      (r) => !walked.includes(`${r.method} ${r.url}`) && !r.url.startsWith('/v1/operator/') && !SIGNED_LINKS.includes(r.url),
    );
    expect(outside.map((r) => `${r.method} ${r.url}`)).toEqual([]);

    for (const a of await walk(theirs, bo.headers)) {
      expect(a.status, a.route).toBe(404);
      if (a.code !== undefined) expect(a.code, a.route).toBe('not_found');
    }
    // The threads of their teams, of no team and assigned to them answer as usual.
    for (const t of [mine, noTeam, assigned]) {
      for (const a of await walk(t, bo.headers)) {
        const expected = SEEN_BUT_REFUSED[a.route];
        if (expected !== undefined) expect(a.status, a.route).toBe(expected);
        else expect(a.status, `${a.route} on thread ${t.id}`).toBeLessThan(300);
      }
    }
    // Admins and API keys reach every thread.
    for (const headers of [ada.headers, tenant.headers])
      for (const a of await walk(theirs, headers)) expect(a.status, a.route).not.toBe(404);
  });
});

describe('restrictAgentsToTeams in lists, search and label counts', () => {
  it('leaves the thread out of the lists, whatever the filter', async () => {
    expect(await listIds(bo.headers)).toEqual(visible);
    expect(await listIds(bo.headers, `&teamId=${returns.id}`)).toEqual([assigned.id]);
    expect(await listIds(bo.headers, '&label=vip&status=open')).toEqual(visible);
    expect(await listIds(ada.headers)).toEqual(all);
    expect(await listIds(tenant.headers)).toEqual(all);
  });

  it('leaves its messages out of search and the thread out of label counts', async () => {
    const found = async (headers: Record<string, string>) =>
      ((await ok('GET', '/v1/messages/search?q=kumquat&limit=100', headers)) as { threadId: number }[])
        .map((m) => m.threadId)
        .sort((a, b) => a - b);
    expect(await found(bo.headers)).toEqual(visible);
    expect(await found(ada.headers)).toEqual(all);
    const vip = async (headers: Record<string, string>) =>
      ((await ok('GET', '/v1/labels', headers)) as { name: string; openThreads: number }[]).find((l) => l.name === 'vip')?.openThreads;
    expect(await vip(bo.headers)).toBe(3);
    expect(await vip(ada.headers)).toBe(4);
    expect(await vip(tenant.headers)).toBe(4);
  });
});

describe('restrictAgentsToTeams as it changes', () => {
  it('shows everything with the setting off, and applies membership on the next request', async () => {
    await setRestricted(false);
    expect(await listIds(bo.headers)).toEqual(all);
    expect((await call('GET', `/v1/threads/${theirs.id}`, bo.headers)).statusCode).toBe(200);
    await setRestricted(true);
    expect((await call('GET', `/v1/threads/${theirs.id}`, bo.headers)).statusCode).toBe(404);
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [bo.user.id] });
    expect(await listIds(bo.headers)).toEqual(all);
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [] });
    expect(await listIds(bo.headers)).toEqual(visible);
  });
});

const url = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const s of sockets) s.close();
});

describe('restrictAgentsToTeams on the realtime socket', () => {
  async function connect(headers: Record<string, string>) {
    const ws = new WebSocket(`${url}/v1/realtime`, { headers });
    sockets.push(ws);
    const events: { type: string; data: { id?: number; threadId?: number } }[] = [];
    ws.on('message', (m) => events.push(JSON.parse(String(m))));
    await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');
    return events;
  }
  const about = (events: Awaited<ReturnType<typeof connect>>, threadId: number) =>
    events.filter((e) => e.data.threadId === threadId || (e.type.startsWith('thread.') && e.data.id === threadId)).map((e) => e.type);

  it("never sends an agent the events of another team's thread, and sends their own team's", async () => {
    const agent = await connect(bo.headers);
    const admin = await connect(ada.headers);
    await ok('PATCH', `/v1/threads/${theirs.id}`, ada.headers, { labels: ['vip', 'urgent'] });
    await ok('POST', `/v1/threads/${theirs.id}/messages`, ada.headers, { text: 'a note', private: true });
    await ok('PATCH', `/v1/threads/${mine.id}`, ada.headers, { labels: ['vip', 'urgent'] });
    // Events arrive in order: once the agent has the second thread's, the first's would be there.
    await waitFor(async () => about(agent, mine.id).includes('thread.updated'), "the agent's team's thread.updated");
    await waitFor(async () => about(admin, mine.id).includes('thread.updated'), "the admin's copy");
    expect(about(agent, mine.id)).toEqual(['message.created', 'thread.updated']);
    expect(about(agent, theirs.id)).toEqual([]);
    // The label change's activity line and thread, then the note (a note changes no thread field).
    expect(about(admin, theirs.id)).toEqual(['message.created', 'thread.updated', 'message.created']);

    // Joining the team closes the agent's socket (1012: read again, below); on the next one
    // the team's events arrive, as who sees what is asked per batch of events.
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [bo.user.id] });
    const again = await connect(bo.headers);
    await ok('PATCH', `/v1/threads/${theirs.id}`, ada.headers, { labels: ['vip'] });
    await waitFor(async () => about(again, theirs.id).includes('thread.updated'), 'the thread.updated of a team just joined');
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [] });
  });
});

describe('restrictAgentsToTeams: what a user may see changes wholesale', () => {
  /** A socket: the events it got, and the code it was closed with once it is. */
  async function connect(headers: Record<string, string>) {
    const socket = new WebSocket(`${url}/v1/realtime`, { headers });
    sockets.push(socket);
    const state: { events: { type: string; data: { id?: number } }[]; closed?: number } = { events: [] };
    socket.on('message', (m) => state.events.push(JSON.parse(String(m))));
    socket.on('close', (code) => {
      state.closed = code;
    });
    await waitFor(async () => state.events.some((e) => e.type === 'ready'), 'the socket to be ready');
    return state;
  }
  type Socket = Awaited<ReturnType<typeof connect>>;
  const closed = (...sockets: Socket[]) => waitFor(async () => sockets.every((s) => s.closed === 1012), 'the sockets to close with 1012');
  /**
   * Events reach a hub's sockets in the order they were published: once a change made after
   * the others has reached `sockets`, what came before would have closed them.
   */
  async function stillOpen(...sockets: Socket[]) {
    const labels = ['vip', `mark-${sockets.length}-${Date.now()}`];
    await ok('PATCH', `/v1/threads/${noTeam.id}`, ada.headers, { labels });
    await waitFor(
      async () =>
        sockets.every((s) =>
          s.events.some(
            (e) => e.type === 'thread.updated' && e.data.id === noTeam.id && (e.data as { labels?: string[] }).labels?.includes(labels[1]!),
          ),
        ),
      'a later change to reach the sockets',
    );
    for (const s of sockets) expect(s.closed).toBeUndefined();
  }

  it('closes with 1012 (reconnect and read again) the sockets of who joined or left a team, or had the admin role given or taken, and every socket when the setting switches', async () => {
    const cy = await signedInUser(ctx.app, ctx, ws, { name: 'Cy', roles: ['agent'] });
    const dee = await signedInUser(ctx.app, ctx, ws, { name: 'Dee', roles: ['agent'] });

    // Cy joins Returns: Cy's socket closes; Bo's and Dee's stay open.
    let cySocket = await connect(cy.headers);
    let boSocket = await connect(bo.headers);
    let deeSocket = await connect(dee.headers);
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [cy.user.id] });
    await closed(cySocket);
    await stillOpen(boSocket, deeSocket);

    // Billing's members become Cy alone: Bo left and Cy joined, Dee neither.
    cySocket = await connect(cy.headers);
    await ok('PUT', `/v1/teams/${billing.id}/members`, tenant.headers, { userIds: [cy.user.id] });
    await closed(boSocket, cySocket);
    await stillOpen(deeSocket);
    expect(await listIds(bo.headers)).toEqual([noTeam.id, assigned.id].sort((a, b) => a - b));
    await ok('PUT', `/v1/teams/${billing.id}/members`, tenant.headers, { userIds: [bo.user.id] });
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [] });

    // Dee made an admin, then an agent again: Dee's socket closes each time, Bo's never; a
    // rename closes nothing.
    boSocket = await connect(bo.headers);
    await ok('PATCH', `/v1/users/${dee.user.id}`, tenant.headers, { roles: ['agent', 'admin'] });
    await closed(deeSocket);
    deeSocket = await connect(dee.headers);
    await ok('PATCH', `/v1/users/${dee.user.id}`, tenant.headers, { roles: ['agent'] });
    await closed(deeSocket);
    deeSocket = await connect(dee.headers);
    await ok('PATCH', `/v1/users/${dee.user.id}`, tenant.headers, { name: 'Dee D.' });
    await stillOpen(boSocket, deeSocket);

    // The setting switched off: every socket of the workspace closes, an admin's too.
    const adminSocket = await connect(ada.headers);
    await setRestricted(false);
    await closed(boSocket, deeSocket, adminSocket);

    // With the setting off, joining or leaving a team changes no one's sight: nothing closes.
    boSocket = await connect(bo.headers);
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [bo.user.id] });
    await ok('PUT', `/v1/teams/${returns.id}/members`, tenant.headers, { userIds: [] });
    await stillOpen(boSocket);
    await setRestricted(true);
    await closed(boSocket);
  });
});

describe('restrictAgentsToTeams: a thread that moves out of sight on the socket', () => {
  async function connect(headers: Record<string, string>) {
    const socket = new WebSocket(`${url}/v1/realtime`, { headers });
    sockets.push(socket);
    const events: { type: string; data: Record<string, unknown>; truncated?: boolean }[] = [];
    socket.on('message', (m) => events.push(JSON.parse(String(m))));
    await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');
    return events;
  }
  const about = (events: Awaited<ReturnType<typeof connect>>, threadId: number) =>
    events.filter((e) => e.data.threadId === threadId || (e.type.startsWith('thread.') && e.data.id === threadId));

  it('tells an agent who saw it that it changed, by its id alone, and no one who never saw it', async () => {
    const cy = await signedInUser(ctx.app, ctx, ws, { name: 'Cy', roles: ['agent'] });
    const moved = await thread(billing.id);
    const unassigned = await thread(returns.id, bo.user.id);
    const agent = await connect(bo.headers);
    const outsider = await connect(cy.headers);
    const admin = await connect(ada.headers);

    // Moved to a team Bo is not in: Bo hears only that it changed, not where it went nor its activity.
    await ok('PATCH', `/v1/threads/${moved.id}`, ada.headers, { teamId: returns.id });
    await waitFor(async () => about(agent, moved.id).length > 0, "the agent's frame about the moved thread");
    expect(about(agent, moved.id)).toEqual([{ type: 'thread.updated', data: { id: moved.id }, truncated: true }]);
    expect((await call('GET', `/v1/threads/${moved.id}`, bo.headers)).statusCode).toBe(404);

    // Another team's thread Bo saw as its assignee, given to no one: the same.
    await ok('PATCH', `/v1/threads/${unassigned.id}`, ada.headers, { assigneeId: null });
    await waitFor(async () => about(agent, unassigned.id).length > 0, "the agent's frame about the unassigned thread");
    expect(about(agent, unassigned.id)).toEqual([{ type: 'thread.updated', data: { id: unassigned.id }, truncated: true }]);

    // The admin hears the whole change; Cy (no team) never saw either thread and hears nothing.
    await waitFor(async () => about(admin, unassigned.id).some((e) => e.type === 'thread.updated'), "the admin's copy");
    expect(about(admin, moved.id).find((e) => e.type === 'thread.updated')?.data).toMatchObject({ id: moved.id, teamId: returns.id });
    expect(about(outsider, moved.id)).toEqual([]);
    expect(about(outsider, unassigned.id)).toEqual([]);

    // Once out of sight, its next changes reach Bo no more; moved back, the whole thread again.
    await ok('PATCH', `/v1/threads/${moved.id}`, ada.headers, { labels: ['vip', 'later'] });
    await ok('PATCH', `/v1/threads/${moved.id}`, ada.headers, { teamId: billing.id });
    await waitFor(async () => about(agent, moved.id).length > 2, 'the frames of the thread moved back');
    expect(about(agent, moved.id).map((e) => [e.type, e.data.teamId ?? e.data.threadId])).toEqual([
      ['thread.updated', undefined],
      ['message.created', moved.id],
      ['thread.updated', billing.id],
    ]);
  });
});

describe('restrictAgentsToTeams and SLA events on the socket', () => {
  it("never sends an agent the sla.warning or sla.breached of another team's thread", async () => {
    const connect = async (headers: Record<string, string>) => {
      const socket = new WebSocket(`${url}/v1/realtime`, { headers });
      sockets.push(socket);
      const events: { type: string; data: { id?: number } }[] = [];
      socket.on('message', (m) => events.push(JSON.parse(String(m))));
      await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');
      return events;
    };
    const agent = await connect(bo.headers);
    const admin = await connect(ada.headers);
    const policy = await ok('POST', '/v1/sla-policies', tenant.headers, {
      name: 'Teams',
      firstResponse: 'PT1H',
      conditions: { teamIds: [billing.id, returns.id] },
    });
    // A priority change applies the policy to both threads, which start their clocks.
    for (const t of [theirs, mine]) await ok('PATCH', `/v1/threads/${t.id}`, ada.headers, { priority: 'high' });
    const slaEvents = (events: Awaited<ReturnType<typeof connect>>, threadId: number) =>
      events.filter((e) => e.type.startsWith('sla.') && e.data.id === threadId).map((e) => e.type);
    for (const t of [theirs, mine]) {
      const { rows } = await sql<{ data: SlaClockJob }>`
        SELECT data FROM pgboss.job WHERE name = ${SLA_CLOCK_QUEUE} AND (data->>'threadId')::bigint = ${t.id}
        ORDER BY start_after`.execute(db);
      for (const job of rows.filter((r) => r.data.target === 'firstResponse')) expect(await tellSlaMoment(ctx.deps, job.data)).toBe(true);
    }
    // Events arrive in order: once the agent has their own thread's breach, the other's would be there.
    await waitFor(async () => slaEvents(agent, mine.id).includes('sla.breached'), "the agent's team's sla.breached");
    await waitFor(async () => slaEvents(admin, mine.id).includes('sla.breached'), "the admin's copy");
    expect(slaEvents(agent, theirs.id)).toEqual([]);
    expect(slaEvents(admin, theirs.id)).toEqual(['sla.warning', 'sla.breached']);
    await ok('DELETE', `/v1/sla-policies/${policy.id}`, tenant.headers);
  });
});

describe('restrictAgentsToTeams on new conversations', () => {
  it("refuses to start a conversation that lands in another team's thread", async () => {
    const returnsLine = await makeConnection(ctx.deps, ws, { integrationKey: 'sms' });
    await ok('PATCH', `/v1/connections/${returnsLine.id}`, tenant.headers, { teamId: returns.id });
    const payload = { connectionId: returnsLine.id, to: '+4915112345678', text: 'hello' };
    const refused = await call('POST', '/v1/conversations', bo.headers, payload);
    expect(refused.statusCode, refused.body).toBe(404);
    expect(await db.selectFrom('threads').select('id').where('connection_id', '=', returnsLine.id).execute()).toEqual([]);
    expect((await call('POST', '/v1/conversations', ada.headers, payload)).statusCode).toBe(202);
  });
});

describe('restrictAgentsToTeams and a replayed Idempotency-Key', () => {
  it("answers 404, not the stored answer, to an agent replaying a key on another team's thread", async () => {
    const key = { 'idempotency-key': `note-${theirs.id}` };
    const note = { text: 'the refund code is 4711', private: true };
    const first = await call('POST', `/v1/threads/${theirs.id}/messages`, { ...ada.headers, ...key }, note);
    expect(first.statusCode, first.body).toBe(201);
    const replayed = await call('POST', `/v1/threads/${theirs.id}/messages`, { ...bo.headers, ...key }, note);
    expect(replayed.statusCode, replayed.body).toBe(404);
    expect(replayed.json().error.code).toBe('not_found');
    expect(replayed.body).not.toContain('4711');
    // The one who sees it still gets the first answer again.
    const again = await call('POST', `/v1/threads/${theirs.id}/messages`, { ...ada.headers, ...key }, note);
    expect(again.json().data.id).toBe(first.json().data.id);
  });

  it("answers 404 to an agent replaying the key of a conversation started in another team's thread", async () => {
    const returnsLine = await makeConnection(ctx.deps, ws, { integrationKey: 'sms' });
    await ok('PATCH', `/v1/connections/${returnsLine.id}`, tenant.headers, { teamId: returns.id });
    const key = { 'idempotency-key': `conversation-${returnsLine.id}` };
    const payload = { connectionId: returnsLine.id, to: '+4915112345679', text: 'your refund code is 4711' };
    expect((await call('POST', '/v1/conversations', { ...ada.headers, ...key }, payload)).statusCode).toBe(202);
    const replayed = await call('POST', '/v1/conversations', { ...bo.headers, ...key }, payload);
    expect(replayed.statusCode, replayed.body).toBe(404);
    expect(replayed.body).not.toContain('4711');
  });
});
