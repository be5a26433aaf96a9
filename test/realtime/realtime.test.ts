import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { publishEvent } from '../../src/realtime/publish.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

const SECRET = 'realtime-accounts-secret';
// Two api processes on one database: A publishes, B holds the sockets.
const a = await useTestContext({ env: { INBOX_ACCOUNTS_WEBHOOK_SECRET: SECRET } });
const b = await startTestContext({ database: a.database });
afterAll(() => b.close());
const bUrl = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');

const tenant = await makeTenant(a.deps);
const other = await makeTenant(a.deps);

interface Socket {
  ws: WebSocket;
  events: { type: string; targetUserId?: number; data: Record<string, unknown> }[];
  closed: Promise<number>;
}

async function signIn(workspaceId: number, email: string) {
  const { user, password } = await makeUser(a.deps, workspaceId, { email });
  const token = (await a.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password } })).json()
    .access_token as string;
  return { user, token };
}

async function connect(token: string, how: 'query' | 'header' = 'query'): Promise<Socket> {
  const ws =
    how === 'query'
      ? new WebSocket(`${bUrl}/v1/realtime?token=${encodeURIComponent(token)}`)
      : new WebSocket(`${bUrl}/v1/realtime`, { headers: { authorization: `Bearer ${token}` } });
  const events: Socket['events'] = [];
  ws.on('message', (m) => events.push(JSON.parse(String(m))));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');
  return { ws, events, closed };
}

describe('GET /v1/realtime across api processes', () => {
  it('delivers an event published through one process to sockets held by another, per workspace', async () => {
    const ada = await signIn(tenant.workspace.id, 'ada.rt@acme.test');
    const outsider = await signIn(other.workspace.id, 'eve.rt@other.test');
    const socket = await connect(ada.token);
    const foreign = await connect(outsider.token, 'header');
    await publishEvent(a.deps.db, { type: 'message.created', workspaceId: tenant.workspace.id, data: { id: 41, threadId: 7 } });
    await waitFor(async () => socket.events.find((e) => e.type === 'message.created'), 'message.created on the socket');
    expect(socket.events.find((e) => e.type === 'message.created')!.data).toEqual({ id: 41, threadId: 7 });
    // a marker event for the outsider's workspace proves its socket is live and saw nothing else
    await publishEvent(a.deps.db, { type: 'thread.updated', workspaceId: other.workspace.id, data: { id: 1 } });
    await waitFor(async () => foreign.events.find((e) => e.type === 'thread.updated'), 'the marker');
    // Its own user's connection is announced to its own workspace (user.updated), nothing of Ada's.
    expect(foreign.events.filter((e) => e.type !== 'user.updated' || e.data.id !== outsider.user.id).map((e) => e.type)).toEqual([
      'ready',
      'thread.updated',
    ]);
    socket.ws.close();
    foreign.ws.close();
  });

  it('sends session.revoked only to the target user’s sockets and closes them', async () => {
    const target = await signIn(tenant.workspace.id, 'target.rt@acme.test');
    const colleague = await signIn(tenant.workspace.id, 'colleague.rt@acme.test');
    const s1 = await connect(target.token);
    const s2 = await connect(colleague.token);
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: target.user.id } });
    const res = await a.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', SECRET).update(body).digest('hex') },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(await s1.closed).toBe(4001);
    const revoked = s1.events.find((e) => e.type === 'session.revoked')!;
    expect(revoked.targetUserId).toBe(target.user.id);
    expect(revoked.data).toMatchObject({ userId: target.user.id });
    // the colleague's socket stays open and never saw the revocation
    await publishEvent(a.deps.db, { type: 'thread.updated', workspaceId: tenant.workspace.id, data: { id: 2 } });
    await waitFor(async () => s2.events.find((e) => e.type === 'thread.updated'), 'the marker');
    expect(s2.events.some((e) => e.type === 'session.revoked')).toBe(false);
    expect(s2.ws.readyState).toBe(WebSocket.OPEN);
    s2.ws.close();
  });

  it('republishes a session.revoked naming one session with its sessionId and closes only that session’s socket', async () => {
    const { user, password } = await makeUser(a.deps, tenant.workspace.id, { email: 'one-session.rt@acme.test' });
    const login = async () =>
      (await a.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
        .access_token as string;
    const [first, second] = [await login(), await login()];
    const jti = JSON.parse(Buffer.from(first.split('.')[1]!, 'base64url').toString()).jti as string;
    const ended = await connect(first);
    const kept = await connect(second);
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id, sessionId: jti } });
    const res = await a.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': createHmac('sha256', SECRET).update(body).digest('hex') },
      payload: body,
    });
    expect(res.json().data).toMatchObject({ acted: true, sessionsEnded: 1 });
    expect(await ended.closed).toBe(4001);
    expect(ended.events.find((e) => e.type === 'session.revoked')!.data).toMatchObject({ userId: user.id, sessionId: jti });
    // the user's other session hears of it and stays open
    await waitFor(async () => kept.events.find((e) => e.type === 'session.revoked'), 'session.revoked on the other socket');
    expect(kept.ws.readyState).toBe(WebSocket.OPEN);
    kept.ws.close();
  });

  it('closes a socket when its session logs out', async () => {
    const user = await signIn(tenant.workspace.id, 'leaver.rt@acme.test');
    const socket = await connect(user.token);
    await a.app.inject({ method: 'POST', url: '/api/user/logout', headers: { authorization: `Bearer ${user.token}` } });
    expect(await socket.closed).toBe(4001);
  });

  it('refuses a socket without a valid token before the upgrade', async () => {
    for (const url of [`${bUrl}/v1/realtime`, `${bUrl}/v1/realtime?token=nope`]) {
      const status = await new Promise<number>((resolve) => {
        const ws = new WebSocket(url);
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
      expect(status, url).toBe(401);
    }
  });

  it('answers a plain GET with a valid token 426 upgrade_required in the error envelope', async () => {
    const { token } = await signIn(tenant.workspace.id, 'plain.rt@acme.test');
    const res = await b.app.inject({ method: 'GET', url: '/v1/realtime', headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(426);
    expect(res.headers.upgrade).toBe('websocket');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({
      error: { code: 'upgrade_required', message: 'this route is a websocket: connect with Upgrade: websocket' },
      meta: { requestId: expect.any(String) },
    });
  });
});
