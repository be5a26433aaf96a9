import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  CLOSE_CATCH_UP,
  CLOSE_TOKEN_EXPIRED,
  CLOSE_TOO_MANY_SOCKETS,
  MAX_SOCKETS_PER_VISITOR,
  VisitorHub,
} from '../../src/livechat/visitor-hub.js';
import { REALTIME_CHANNEL, type RealtimeEvent } from '../../src/realtime/publish.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, type OpenSocket, openSocket, startVisitor, upgradeStatus, visitorSays } from '../helpers/livechat.js';
import { socketPair } from '../helpers/socket-pair.js';
import { waitFor } from '../helpers/webhooks.js';

// Two api processes on one database. A runs the workers (the sender) and takes the agents'
// requests; the visitors' sockets are held by B, unless a test says otherwise.
const a = await useTestContext({ workers: true });
const b = await startTestContext({ database: a.database });
afterAll(() => b.close());
const aUrl = (await a.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const bUrl = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');

const tenant = await makeTenant(a.deps);
const widget = await makeWidget(a.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example'] });

// Every event of the tenant bus, to see what agents are told.
const bus = new pg.Client({ connectionString: a.database.url });
await bus.connect();
const busEvents: RealtimeEvent[] = [];
bus.on('notification', (n) => busEvents.push(JSON.parse(n.payload!) as RealtimeEvent));
await bus.query(`LISTEN ${REALTIME_CHANNEL}`);
afterAll(() => bus.end());

// The widget lists allowedOrigins: its sockets come from a page of one, as a browser's would.
const SHOP = { origin: 'https://shop.example' };
const visitorSocket = (token: string, base = bUrl) =>
  openSocket(`${base}/v1/livechat/${widget.key}/socket?visitorToken=${encodeURIComponent(token)}`, SHOP);
const agentReplies = async (threadId: number, text: string) => {
  const res = await a.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers: tenant.headers, payload: { text } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data as { id: number };
};
const messageRow = (id: number) => a.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const frameOf = (s: OpenSocket, type: string, id: number) =>
  s.frame((f) => f.type === type && f.data.id === id, `${type} of message ${id}`);

describe('GET /v1/livechat/:widgetKey/socket', () => {
  it('carries an agent’s reply to the visitor’s socket on another api process, and the reply becomes delivered', async () => {
    const visitor = await startVisitor(a.app, widget.key, { name: 'Lin' });
    expect((await visitorSays(a.app, widget.key, visitor.token, 'Is the blue one in stock?')).statusCode).toBe(201);
    const socket = await visitorSocket(visitor.token);
    const reply = await agentReplies(visitor.threadId, 'Yes, two left.');

    const created = await frameOf(socket, 'message.created', reply.id);
    expect(created).toEqual({
      type: 'message.created',
      data: {
        id: reply.id,
        threadId: visitor.threadId,
        direction: 'outbound',
        externalId: created.data.externalId,
        text: 'Yes, two left.',
        status: created.data.status,
        error: null,
        kind: 'message',
        private: false,
        authorId: null,
        attachments: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    // Taken before or after the sender recorded it sent: it is shown as it was then.
    expect([null, String(reply.id)]).toContain(created.data.externalId);
    expect(['queued', 'sent']).toContain(created.data.status);
    const updated = await frameOf(socket, 'message.updated', reply.id);
    expect(updated.data).toMatchObject({ id: reply.id, status: 'delivered', externalId: String(reply.id) });
    const row = await waitFor(
      async () => ((await messageRow(reply.id)).status === 'delivered' ? messageRow(reply.id) : undefined),
      'the reply to be delivered',
    );
    expect(row.external_id).toBe(String(reply.id));
    // Agents are told on the tenant bus, like any receipt.
    await waitFor(
      async () => busEvents.find((e) => e.type === 'message.updated' && e.data.id === reply.id && e.data.status === 'delivered'),
      'message.updated delivered on the tenant bus',
    );
    // Only the reply and its status reached the visitor: not its own message, nothing else.
    expect(socket.frames.map((f) => [f.type, f.data.id])).toEqual([
      ['message.created', reply.id],
      ['message.updated', reply.id],
    ]);
    socket.ws.close();
  });

  it('without a socket the reply ends sent, and the visitor reads it from the thread', async () => {
    const visitor = await startVisitor(a.app, widget.key);
    const reply = await agentReplies(visitor.threadId, 'Are you still there?');
    const row = await waitFor(async () => {
      const m = await messageRow(reply.id);
      return m.status !== 'queued' ? m : undefined;
    }, 'the reply to be sent');
    expect(row.status).toBe('sent');
    expect(row.external_id).toBe(String(reply.id));
    const read = await a.app.inject({ method: 'GET', url: `/v1/livechat/${widget.key}/messages`, headers: visitor.headers });
    expect(read.json().data).toEqual([
      expect.objectContaining({ id: reply.id, direction: 'outbound', text: 'Are you still there?', status: 'sent' }),
    ]);
  });

  it('shows a visitor nothing of another visitor', async () => {
    const one = await startVisitor(a.app, widget.key);
    const two = await startVisitor(a.app, widget.key);
    const s1 = await visitorSocket(one.token);
    const s2 = await visitorSocket(two.token, aUrl);
    const toOne = await agentReplies(one.threadId, 'For visitor one');
    await frameOf(s1, 'message.updated', toOne.id);
    // Two's socket is live: its own reply arrives, and it is the first thing it ever saw.
    const toTwo = await agentReplies(two.threadId, 'For visitor two');
    await frameOf(s2, 'message.updated', toTwo.id);
    expect(new Set(s2.frames.map((f) => f.data.id))).toEqual(new Set([toTwo.id]));
    expect(new Set(s1.frames.map((f) => f.data.id))).toEqual(new Set([toOne.id]));
    // Neither can read the other's thread over HTTP either.
    const read = await a.app.inject({ method: 'GET', url: `/v1/livechat/${widget.key}/messages`, headers: two.headers });
    expect(read.json().data.map((m: { id: number }) => m.id)).toEqual([toTwo.id]);
    s1.ws.close();
    s2.ws.close();
  });

  it('hands a reply to every socket of the visitor (two tabs on two processes); it is delivered once', async () => {
    const visitor = await startVisitor(a.app, widget.key);
    const tabs = [await visitorSocket(visitor.token, aUrl), await visitorSocket(visitor.token, bUrl)];
    const reply = await agentReplies(visitor.threadId, 'Both tabs see this');
    for (const tab of tabs) await frameOf(tab, 'message.created', reply.id);
    // Each process handles its events in order: once each tab has the update, both processes
    // have tried to record the delivery, and only one of them did.
    for (const tab of tabs) await frameOf(tab, 'message.updated', reply.id);
    const delivered = () =>
      busEvents.filter((e) => e.type === 'message.updated' && e.data.id === reply.id && e.data.status === 'delivered');
    await waitFor(async () => delivered().length > 0, 'the delivery on the tenant bus');
    // (A `sent` may come before it, when the sender recorded its outcome first.)
    expect(delivered()).toHaveLength(1);
    for (const tab of tabs) tab.ws.close();
  });

  it('after two visitors’ contacts are merged, a reply reaches the sockets of both, opened before the merge', async () => {
    const kept = await startVisitor(a.app, widget.key, { name: 'Noor' });
    const folded = await startVisitor(a.app, widget.key, { name: 'Noor (phone)' });
    const sockets = [await visitorSocket(kept.token, aUrl), await visitorSocket(folded.token, bUrl)];
    const contactOf = async (threadId: number) =>
      (await a.deps.db.selectFrom('threads').select('contact_id').where('id', '=', threadId).executeTakeFirstOrThrow()).contact_id;
    const merged = await a.app.inject({
      method: 'POST',
      url: `/v1/contacts/${await contactOf(kept.threadId)}/merge`,
      headers: tenant.headers,
      payload: { contactId: await contactOf(folded.threadId) },
    });
    expect(merged.statusCode, merged.body).toBe(200);

    const reply = await agentReplies(kept.threadId, 'One conversation now');
    for (const s of sockets) {
      expect((await frameOf(s, 'message.created', reply.id)).data.text).toBe('One conversation now');
      expect((await frameOf(s, 'message.updated', reply.id)).data.status).toBe('delivered');
    }
    for (const s of sockets) s.ws.close();
  });

  it('refuses the upgrade: unknown widget 404 whatever the token, missing or bad token 401, a refused origin 403', async () => {
    const visitor = await startVisitor(a.app, widget.key);
    const other = await makeWidget(a.deps, tenant.workspace.id);
    const otherVisitor = await startVisitor(a.app, other.key);
    const socketUrl = (key: string, token?: string) =>
      `${bUrl}/v1/livechat/${key}/socket${token === undefined ? '' : `?visitorToken=${encodeURIComponent(token)}`}`;
    expect(await upgradeStatus(socketUrl('wk_nope000000000000', visitor.token), SHOP)).toBe(404);
    expect(await upgradeStatus(socketUrl(widget.key), SHOP)).toBe(401);
    expect(await upgradeStatus(socketUrl(widget.key, 'inbox_vt_wrong'), SHOP)).toBe(401);
    expect(await upgradeStatus(socketUrl(widget.key, otherVisitor.token), SHOP)).toBe(401);
    expect(await upgradeStatus(socketUrl(widget.key, visitor.token), { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(socketUrl(widget.key, visitor.token))).toBe(403);
    expect(await upgradeStatus(socketUrl(widget.key, visitor.token), SHOP)).toBe(101);
    expect(await upgradeStatus(socketUrl(widget.key), { ...SHOP, authorization: `Bearer ${visitor.token}` })).toBe(101);
  });

  it('answers a plain GET with a valid token 426 upgrade_required in the error envelope', async () => {
    const visitor = await startVisitor(a.app, widget.key);
    const res = await b.app.inject({
      method: 'GET',
      url: `/v1/livechat/${widget.key}/socket?visitorToken=${encodeURIComponent(visitor.token)}`,
      headers: SHOP,
    });
    expect(res.statusCode).toBe(426);
    expect(res.headers.upgrade).toBe('websocket');
    expect(res.json()).toEqual({
      error: { code: 'upgrade_required', message: 'this route is a websocket: connect with Upgrade: websocket' },
      meta: { requestId: expect.any(String) },
    });
  });

  it('closes visitors’ sockets with 1012 after its listener reconnects, so widgets read what they missed', async () => {
    const visitor = await startVisitor(a.app, widget.key);
    const socket = await visitorSocket(visitor.token);
    const { rows } = await sql<{ n: number }>`
      SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
      WHERE application_name = 'inbox-livechat' AND datname = current_database()`.execute(a.deps.db);
    expect(rows[0]!.n).toBeGreaterThan(0);
    // Closed once B listens again: a new socket gets replies as before.
    expect(await socket.closed).toBe(CLOSE_CATCH_UP);
    const again = await visitorSocket(visitor.token);
    const reply = await agentReplies(visitor.threadId, 'after the restart');
    await frameOf(again, 'message.created', reply.id);
    again.ws.close();
  });
});

describe('the visitor hub', () => {
  const visitor = (expiresAt: Date) => ({
    id: 1,
    handle: 'h-1',
    contact_id: 1,
    connection_id: widget.connection.id,
    expires_at: expiresAt,
  });

  it('closes a socket whose token expired (4001) at the next heartbeat', async () => {
    const hub = new VisitorHub(a.deps);
    const live = await socketPair();
    const expired = await socketPair();
    hub.add({ socket: live.serverSide, visitor: visitor(new Date(Date.now() + 60_000)) });
    hub.add({ socket: expired.serverSide, visitor: { ...visitor(new Date(Date.now() - 1)), handle: 'h-2' } });
    hub.heartbeat();
    expect(await expired.closed).toBe(CLOSE_TOKEN_EXPIRED);
    expect(live.serverSide.readyState).toBe(WebSocket.OPEN);
    await hub.close();
    live.done();
    expired.done();
  });

  it(`holds at most ${MAX_SOCKETS_PER_VISITOR} sockets of one visitor; the next is closed with 4008`, async () => {
    const hub = new VisitorHub(a.deps);
    const pairs = await Promise.all(Array.from({ length: MAX_SOCKETS_PER_VISITOR + 1 }, () => socketPair()));
    const held = pairs.map((p) => hub.add({ socket: p.serverSide, visitor: visitor(new Date(Date.now() + 60_000)) }));
    expect(held.filter(Boolean)).toHaveLength(MAX_SOCKETS_PER_VISITOR);
    expect(held.at(-1)).toBe(false);
    expect(await pairs.at(-1)!.closed).toBe(CLOSE_TOO_MANY_SOCKETS);
    await hub.close();
    for (const p of pairs) p.done();
  });
});
