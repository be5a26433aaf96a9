import { afterAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { clientAddressKey } from '../../src/http/client-address.js';
import { CLOSE_VISITOR_BLOCKED } from '../../src/livechat/visitor-hub.js';
import { CLOSE_SOCKET_LIMIT } from '../../src/livechat/visitor-limits.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { makeWidget, type OpenSocket, openSocket, startVisitor, upgradeStatus, visitorSays } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';

// Small limits, and the client address taken from X-Forwarded-For (the test's sockets all come
// from 127.0.0.1, a trusted proxy here) so one test can speak from many addresses.
const env = { INBOX_LIVECHAT_MAX_SOCKETS_PER_ADDRESS: '2', INBOX_LIVECHAT_MAX_SOCKETS_PER_PROCESS: '3', INBOX_TRUST_PROXY: 'true' };
const a = await useTestContext({ env });
// A second api process on the same database: the one holding the sockets in the block test.
const b = await startTestContext({ database: a.database, env });
afterAll(() => b.close());
const aUrl = (await a.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const bUrl = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');

const tenant = await makeTenant(a.deps);
const open = await makeWidget(a.deps, tenant.workspace.id);
const shop = await makeWidget(a.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example'] });
const SHOP = { origin: 'https://shop.example' };

const socketUrl = (base: string, key: string, token: string) =>
  `${base}/v1/livechat/${key}/socket?visitorToken=${encodeURIComponent(token)}`;
const openGauge = async (ctx: typeof a) => (await ctx.deps.metrics.livechatSockets.get()).values[0]?.value ?? 0;
const refused = async (limit: string) =>
  (await a.deps.metrics.livechatSocketsRefused.get()).values.find((v) => v.labels.limit === limit)?.value ?? 0;
/** Closes the sockets and waits until the server has counted them gone. */
async function closeAll(sockets: OpenSocket[], ctx = a) {
  for (const s of sockets) s.ws.close();
  await waitFor(async () => (await openGauge(ctx)) === 0, 'the server to count the sockets closed');
}

describe('visitor socket limits', () => {
  it('counts an IPv6 client by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(clientAddressKey('2001:db8:1:2::a')).toBe(clientAddressKey('2001:0db8:0001:0002:ffff:0:0:1'));
    expect(clientAddressKey('2001:db8:1:2::a')).not.toBe(clientAddressKey('2001:db8:1:3::a'));
    expect(clientAddressKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddressKey('203.0.113.9')).toBe('203.0.113.9');
  });

  it('holds at most INBOX_LIVECHAT_MAX_SOCKETS_PER_ADDRESS sockets of one address (IPv6: one /64); the next is closed with 4008', async () => {
    const visitor = await startVisitor(a.app, open.key);
    const from = (ip: string) => openSocket(socketUrl(aUrl, open.key, visitor.token), { 'x-forwarded-for': ip });
    const before = await refused('address');
    const held = [await from('2001:db8:1:2::a'), await from('2001:db8:1:2::b')];
    const third = await from('2001:db8:1:2:ffff::1');
    expect(await third.closed).toBe(CLOSE_SOCKET_LIMIT);
    expect(await refused('address')).toBe(before + 1);
    // Another /64 is another client.
    const elsewhere = await from('2001:db8:1:3::1');
    expect(elsewhere.ws.readyState).toBe(elsewhere.ws.OPEN);
    expect(await openGauge(a)).toBe(3);
    // A closed socket frees its place.
    held[0]!.ws.close();
    await waitFor(async () => (await openGauge(a)) === 2, 'the closed socket to be counted gone');
    const again = await from('2001:db8:1:2::c');
    expect(again.ws.readyState).toBe(again.ws.OPEN);
    await closeAll([held[1]!, elsewhere, again]);
  });

  it('holds at most INBOX_LIVECHAT_MAX_SOCKETS_PER_PROCESS sockets in all; the next is closed with 4008', async () => {
    const visitor = await startVisitor(a.app, open.key);
    const from = (ip: string) => openSocket(socketUrl(aUrl, open.key, visitor.token), { 'x-forwarded-for': ip });
    const before = await refused('process');
    const held = [await from('192.0.2.1'), await from('192.0.2.2'), await from('192.0.2.3')];
    const next = await from('192.0.2.4');
    expect(await next.closed).toBe(CLOSE_SOCKET_LIMIT);
    expect(await refused('process')).toBe(before + 1);
    expect(await openGauge(a)).toBe(3);
    await closeAll(held);
  });
});

describe('visitor socket origin', () => {
  it('a widget with allowedOrigins refuses a socket without Origin (403 before the upgrade); one that lists none takes it', async () => {
    const visitor = await startVisitor(a.app, shop.key);
    expect(await upgradeStatus(socketUrl(aUrl, shop.key, visitor.token))).toBe(403);
    expect(await upgradeStatus(socketUrl(aUrl, shop.key, visitor.token), { origin: 'https://evil.example' })).toBe(403);
    expect(await upgradeStatus(socketUrl(aUrl, shop.key, visitor.token), SHOP)).toBe(101);
    const anyone = await startVisitor(a.app, open.key);
    expect(await upgradeStatus(socketUrl(aUrl, open.key, anyone.token))).toBe(101);
    await waitFor(async () => (await openGauge(a)) === 0, 'the probes to be counted closed');
  });
});

describe('POST /v1/threads/:id/block-visitor', () => {
  const block = (threadId: number, headers: Record<string, string> = tenant.headers, payload?: object) =>
    a.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/block-visitor`, headers, ...(payload ? { payload } : {}) });

  it("ends the visitor's token at once: its socket on another api process closes, its next POST is 401", async () => {
    const visitor = await startVisitor(a.app, shop.key);
    expect((await visitorSays(a.app, shop.key, visitor.token, 'hello')).statusCode).toBe(201);
    const socket = await openSocket(socketUrl(bUrl, shop.key, visitor.token), SHOP);
    const res = await block(visitor.threadId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ threadId: visitor.threadId, visitorsBlocked: 1 });
    expect(await socket.closed).toBe(CLOSE_VISITOR_BLOCKED);
    const next = await visitorSays(a.app, shop.key, visitor.token, 'still there?');
    expect(next.statusCode).toBe(401);
    expect(next.json().error.code).toBe('unauthorized');
    expect(await upgradeStatus(socketUrl(bUrl, shop.key, visitor.token), SHOP)).toBe(401);
    // Blocking again finds nothing left to end.
    expect((await block(visitor.threadId)).json().data).toEqual({ threadId: visitor.threadId, visitorsBlocked: 0 });
    // Another visitor of the same widget is untouched.
    const other = await startVisitor(a.app, shop.key);
    expect((await visitorSays(a.app, shop.key, other.token, 'hi')).statusCode).toBe(201);
  });

  it('is 404 for a thread of another workspace, 422 for a thread that is not live chat, 403 for a read key, 422 for an unknown field', async () => {
    const visitor = await startVisitor(a.app, shop.key);
    const stranger = await makeTenant(a.deps);
    const foreign = await block(visitor.threadId, stranger.headers);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('not_found');

    const whatsapp = await makeConnection(a.deps, tenant.workspace.id, { integrationKey: 'whatsapp' });
    const message = await makeOutboundMessage(a.deps, whatsapp, 'wamid.block-test');
    const notLive = await block(message.thread_id);
    expect(notLive.statusCode).toBe(422);
    expect(notLive.json().error.code).toBe('validation_failed');

    const readKey = await issueApiKey(a.deps.db, tenant.workspace.id, 'reader', ['read']);
    expect((await block(visitor.threadId, { 'x-api-key': readKey.key })).statusCode).toBe(403);
    const unknown = await block(visitor.threadId, tenant.headers, { reason: 'spam' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error.code).toBe('validation_failed');
    // None of these ended the token.
    expect((await visitorSays(a.app, shop.key, visitor.token, 'still here')).statusCode).toBe(201);
  });
});

describe('POST /v1/contacts/:id/erase', () => {
  it("closes the visitor's sockets on every api process at once, as its token ends", async () => {
    const visitor = await startVisitor(a.app, shop.key);
    expect((await visitorSays(a.app, shop.key, visitor.token, 'forget me')).statusCode).toBe(201);
    const socket = await openSocket(socketUrl(bUrl, shop.key, visitor.token), SHOP);
    const thread = await a.app.inject({ method: 'GET', url: `/v1/threads/${visitor.threadId}`, headers: tenant.headers });
    const erased = await a.app.inject({
      method: 'POST',
      url: `/v1/contacts/${thread.json().data.contactId}/erase`,
      headers: tenant.headers,
    });
    expect(erased.statusCode, erased.body).toBe(202);
    expect(await socket.closed).toBe(CLOSE_VISITOR_BLOCKED);
    expect((await visitorSays(a.app, shop.key, visitor.token, 'still there?')).statusCode).toBe(401);
  });
});

describe('DELETE /v1/connections/:id of a widget', () => {
  it("closes its visitors' sockets on every api process (4003), so no widget waits on a deleted chat", async () => {
    const doomed = await makeWidget(a.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example'] });
    const visitor = await startVisitor(a.app, doomed.key);
    expect((await visitorSays(a.app, doomed.key, visitor.token, 'anyone there?')).statusCode).toBe(201);
    const socket = await openSocket(socketUrl(bUrl, doomed.key, visitor.token), SHOP);
    // A visitor of another widget keeps its socket.
    const bystander = await startVisitor(a.app, shop.key);
    const kept = await openSocket(socketUrl(bUrl, shop.key, bystander.token), SHOP);
    const res = await a.app.inject({ method: 'DELETE', url: `/v1/connections/${doomed.connection.id}`, headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(await socket.closed).toBe(CLOSE_VISITOR_BLOCKED);
    expect((await visitorSays(a.app, doomed.key, visitor.token, 'hello?')).statusCode).toBe(404);
    expect(await upgradeStatus(socketUrl(bUrl, doomed.key, visitor.token), SHOP)).toBe(404);
    const reply = await a.app.inject({
      method: 'POST',
      url: `/v1/threads/${bystander.threadId}/messages`,
      headers: tenant.headers,
      payload: { text: 'still here' },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    expect(kept.ws.readyState).toBe(kept.ws.OPEN);
    kept.ws.close();
  });
});
