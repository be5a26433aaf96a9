import { Kysely, PostgresDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { DB } from '../../src/db/types.js';
import {
  CLOSE_CATCH_UP,
  CLOSE_CREDENTIAL_ENDED,
  CLOSE_TOO_MANY_SOCKETS,
  MAX_SOCKETS_PER_USER,
  RealtimeHub,
} from '../../src/realtime/hub.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { makeWidget, openSocket, startVisitor } from '../helpers/livechat.js';
import { socketPair } from '../helpers/socket-pair.js';
import { waitFor } from '../helpers/webhooks.js';

// No accounts secret outside production: the webhook takes unsigned bodies (docs/auth.md, "The accounts webhook").
const ctx = await useTestContext();
const url = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const tenant = await makeTenant(ctx.deps);

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const claims = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { sub: string; jti: string; wid: number; exp: number };

async function signIn() {
  const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
  const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
    .access_token as string;
  return { user, jwt, sessionId: claims(jwt).jti };
}

async function newPat(jwt: string) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/personal-access-tokens',
    headers: bearer(jwt),
    payload: { name: 'socket' },
  });
  return res.json().data as { id: number; token: string };
}

interface Socket {
  ws: WebSocket;
  events: { type: string; truncated?: boolean }[];
  closed: Promise<number>;
  ready: Promise<void>;
}

/** Opens a socket on the listening app; `ready` settles on the `ready` event. */
function open(token: string): Socket {
  const ws = new WebSocket(`${url}/v1/realtime`, { headers: bearer(token) });
  const events: Socket['events'] = [];
  const ready = new Promise<void>((resolve) =>
    ws.on('message', (m) => {
      const e = JSON.parse(String(m)) as { type: string };
      events.push(e);
      if (e.type === 'ready') resolve();
    }),
  );
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return { ws, events, closed, ready };
}

const revokeInDb = (sessionId: string) => sql`UPDATE sessions SET revoked_at = now() WHERE id = ${sessionId}`.execute(ctx.deps.db);

/** Kills the realtime listener's backend, as a database restart does; it reconnects. */
async function killListener() {
  const { rows } = await sql<{ n: number }>`
    SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
    WHERE application_name = 'inbox-realtime' AND datname = current_database()`.execute(ctx.deps.db);
  expect(rows[0]!.n).toBeGreaterThan(0);
}

describe('a socket lives no longer than its credential', () => {
  it('closes a JWT socket at the token’s exp with 4001', async () => {
    const { jwt } = await signIn();
    const c = claims(jwt);
    const exp = Math.floor(Date.now() / 1000) + 2;
    const short = ctx.app.jwt.sign({ sub: c.sub, jti: c.jti, wid: c.wid, exp });
    const socket = open(short);
    await socket.ready;
    expect(await socket.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000 - 50);
  });

  it('closes a personal-access token socket at the token’s expiry with 4001', async () => {
    const { jwt } = await signIn();
    const pat = await newPat(jwt);
    await sql`UPDATE personal_access_tokens SET expires_at = now() + interval '1500 milliseconds' WHERE id = ${pat.id}`.execute(
      ctx.deps.db,
    );
    const socket = open(pat.token);
    await socket.ready;
    expect(await socket.closed).toBe(CLOSE_CREDENTIAL_ENDED);
  });

  it('deleting a personal-access token closes the sockets opened with it, and only those', async () => {
    const { jwt } = await signIn();
    const pat = await newPat(jwt);
    const viaPat = open(pat.token);
    const viaJwt = open(jwt);
    await Promise.all([viaPat.ready, viaJwt.ready]);
    expect((await ctx.app.inject({ method: 'DELETE', url: `/v1/personal-access-tokens/${pat.id}`, headers: bearer(jwt) })).statusCode).toBe(
      200,
    );
    expect(await viaPat.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    await waitFor(async () => viaJwt.events.some((e) => e.type === 'token.revoked'), 'token.revoked on the JWT socket');
    expect(viaJwt.ws.readyState).toBe(WebSocket.OPEN);
    viaJwt.ws.close();
  });

  it('a user-wide session.revoked ends the user’s personal-access tokens and closes their sockets', async () => {
    const { user, jwt } = await signIn();
    const pat = await newPat(jwt);
    const viaPat = open(pat.token);
    await viaPat.ready;
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ type: 'session.revoked', data: { userId: user.id } }),
    });
    expect(res.json().data).toMatchObject({ acted: true, sessionsEnded: 1, tokensEnded: 1 });
    expect(await viaPat.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: bearer(pat.token) })).statusCode).toBe(401);
  });

  it('a revocation too large for NOTIFY (cut to ids) still closes the sockets it ended', async () => {
    const { user, jwt } = await signIn();
    // 250 more sessions: their ids alone are over NOTIFY's 8000 bytes
    await sql`INSERT INTO sessions (id, user_id, expires_at) SELECT gen_random_uuid(), ${user.id}, now() + interval '1 hour' FROM generate_series(1, 250)`.execute(
      ctx.deps.db,
    );
    const socket = open(jwt);
    await socket.ready;
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ type: 'session.revoked', data: { userId: user.id } }),
    });
    expect(res.json().data).toMatchObject({ acted: true, sessionsEnded: 251 });
    expect(await socket.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    expect(socket.events.find((e) => e.type === 'session.revoked')).toEqual({
      type: 'session.revoked',
      targetUserId: user.id,
      data: { userId: user.id },
      truncated: true,
    });
  });

  it(`refuses a user’s socket beyond ${MAX_SOCKETS_PER_USER} on one process with 4008`, async () => {
    const { jwt } = await signIn();
    const held = Array.from({ length: MAX_SOCKETS_PER_USER }, () => open(jwt));
    await Promise.all(held.map((s) => s.ready));
    const extra = open(jwt);
    expect(await extra.closed).toBe(CLOSE_TOO_MANY_SOCKETS);
    expect(extra.events).toEqual([]);
    // a colleague is not affected, and a freed slot can be used again
    const colleague = open((await signIn()).jwt);
    await colleague.ready;
    held[0]!.ws.close();
    await held[0]!.closed;
    const again = open(jwt);
    await again.ready;
    for (const s of [...held.slice(1), colleague, again]) s.ws.close();
  });
});

describe('sockets whose revocation was never heard', () => {
  it('the next heartbeat closes a socket whose session was revoked without a NOTIFY, with one query for all', async () => {
    // The hub's statements, counted through Kysely's log hook on the same pool.
    const queries: string[] = [];
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: ctx.deps.pool }), log: (e) => void queries.push(e.query.sql) });
    const hub = new RealtimeHub({ ...ctx.deps, db });
    const revoked = await signIn();
    const kept = await signIn();
    const pat = await newPat(kept.jwt);
    const a = await socketPair();
    const b = await socketPair();
    const c = await socketPair();
    hub.add({
      socket: a.serverSide,
      workspaceId: tenant.workspace.id,
      userId: revoked.user.id,
      sessionId: revoked.sessionId,
      patId: null,
      expiresAt: null,
    });
    hub.add({
      socket: b.serverSide,
      workspaceId: tenant.workspace.id,
      userId: kept.user.id,
      sessionId: kept.sessionId,
      patId: null,
      expiresAt: null,
    });
    hub.add({
      socket: c.serverSide,
      workspaceId: tenant.workspace.id,
      userId: kept.user.id,
      sessionId: null,
      patId: pat.id,
      expiresAt: null,
    });
    await revokeInDb(revoked.sessionId);
    await sql`UPDATE personal_access_tokens SET revoked_at = now() WHERE id = ${pat.id}`.execute(ctx.deps.db);

    await hub.heartbeat();
    expect(await a.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    expect(await c.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    expect(b.serverSide.readyState).toBe(WebSocket.OPEN);
    expect(queries.filter((q) => /sessions|personal_access_tokens/.test(q))).toHaveLength(1);
    await hub.close();
    for (const p of [a, b, c]) p.done();
  });

  it('after the listener reconnects, closes a socket whose session was revoked while it was down', async () => {
    const hub = new RealtimeHub(ctx.deps);
    await hub.start();
    const { user, sessionId } = await signIn();
    const p = await socketPair();
    hub.add({ socket: p.serverSide, workspaceId: tenant.workspace.id, userId: user.id, sessionId, patId: null, expiresAt: null });
    // The revocation is never announced to this hub: written without a NOTIFY, then the
    // listener's backend is killed, as when the database restarts.
    await revokeInDb(sessionId);
    await killListener();
    expect(await p.closed).toBe(CLOSE_CREDENTIAL_ENDED);
    await hub.close();
    p.done();
  });

  it('after the listener reconnects, closes a live socket with 1012 so its client reads what it missed', async () => {
    const hub = new RealtimeHub(ctx.deps);
    await hub.start();
    const { user, sessionId } = await signIn();
    const p = await socketPair();
    hub.add({ socket: p.serverSide, workspaceId: tenant.workspace.id, userId: user.id, sessionId, patId: null, expiresAt: null });
    // The listener's backend is killed, as when the database restarts: whatever was
    // announced before it listens again never reaches this socket.
    await killListener();
    expect(await p.closed).toBe(CLOSE_CATCH_UP);
    await hub.close();
    p.done();
  });
});

describe('shutdown', () => {
  it('closes the sockets it holds, agents’ and visitors’, with 1001 going away', async () => {
    // A second app on the same database, closed by the test as a process closes at SIGTERM.
    const other = await startTestContext({ database: ctx.database });
    const base = (await other.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
    const { jwt } = await signIn();
    const agent = await openSocket(`${base}/v1/realtime`, bearer(jwt));
    await agent.frame((f) => f.type === 'ready', 'the agent socket to be ready');
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const visitor = await startVisitor(other.app, widget.key);
    const visitorSocket = await openSocket(`${base}/v1/livechat/${widget.key}/socket?visitorToken=${encodeURIComponent(visitor.token)}`);
    // The visitor's socket is held from its upgrade on: open on this side means held on that one.
    await other.close();
    expect(await agent.closed).toBe(1001);
    expect(await visitorSocket.closed).toBe(1001);
  });
});
