import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BOSS_SCHEMA } from '../../src/jobs/boss.js';
import { USER_OFFLINE_QUEUE } from '../../src/users/presence.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { listenToBus, signedInUser } from '../threads/workflow-helpers.js';

// Two api processes on one database: A answers the API; B, with a heartbeat and a delay
// before `offline` shortened for the test (never waited for by sleeping), holds the sockets
// and runs the workers.
const a = await useTestContext();
const b = await startTestContext({ database: a.database, workers: true, presence: { heartbeatMs: 200, offlineAfterMs: 2000 } });
afterAll(() => b.close());
const bUrl = (await b.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const bus = await listenToBus(a.database.url);

type Headers = Record<string, string>;

async function connect(headers: Headers, url = bUrl) {
  const token = headers.authorization!.replace('Bearer ', '');
  const ws = new WebSocket(`${url}/v1/realtime?token=${encodeURIComponent(token)}`);
  const events: { type: string }[] = [];
  ws.on('message', (m) => events.push(JSON.parse(String(m))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');
  return ws;
}

async function closeSocket(ws: WebSocket) {
  const closed = new Promise((resolve) => ws.once('close', resolve));
  ws.close();
  await closed;
}

/** The user as `GET /v1/users` on process A shows them. */
async function userOnA(headers: Headers, id: number) {
  const res = await a.app.inject({ method: 'GET', url: '/v1/users?limit=100', headers });
  return (res.json().data as { id: number; availability: string; connected: boolean; maxOpenThreads: number | null }[]).find(
    (u) => u.id === id,
  )!;
}

describe('PATCH /v1/users/me and maxOpenThreads', () => {
  it('lets a user set their own name and availability, an admin set a cap, and announces each change', async () => {
    const tenant = await makeTenant(a.deps);
    const ada = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Ada', roles: ['agent'] });
    const patch = (url: string, headers: Headers, payload: object) => a.app.inject({ method: 'PATCH', url, headers, payload });

    const res = await patch('/v1/users/me', ada.headers, { availability: 'busy', name: 'Ada L.' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      id: ada.user.id,
      name: 'Ada L.',
      availability: 'busy',
      maxOpenThreads: null,
      connected: false,
    });
    await waitFor(
      async () => bus.find((e) => e.type === 'user.updated' && e.data.id === ada.user.id && e.data.availability === 'busy'),
      'user.updated',
    );
    expect(bus.find((e) => e.type === 'user.updated' && e.data.id === ada.user.id)!.workspaceId).toBe(tenant.workspace.id);

    for (const bad of [{ availability: 'away' }, { roles: ['admin'] }, { maxOpenThreads: 3 }, { name: '' }]) {
      const refused = await patch('/v1/users/me', ada.headers, bad);
      expect(refused.statusCode, JSON.stringify(bad)).toBe(422);
    }
    // An API key is no person.
    expect((await patch('/v1/users/me', tenant.headers, { availability: 'online' })).statusCode).toBe(403);

    // The cap: admins only, a whole number or null.
    expect((await patch(`/v1/users/${ada.user.id}`, ada.headers, { maxOpenThreads: 5 })).statusCode).toBe(403);
    expect((await patch(`/v1/users/${ada.user.id}`, tenant.headers, { maxOpenThreads: -1 })).statusCode).toBe(422);
    expect((await patch(`/v1/users/${ada.user.id}`, tenant.headers, { maxOpenThreads: 1.5 })).statusCode).toBe(422);
    const capped = await patch(`/v1/users/${ada.user.id}`, tenant.headers, { maxOpenThreads: 5 });
    expect(capped.statusCode, capped.body).toBe(200);
    expect(capped.json().data.maxOpenThreads).toBe(5);
    await waitFor(
      async () => bus.find((e) => e.type === 'user.updated' && e.data.id === ada.user.id && e.data.maxOpenThreads === 5),
      'user.updated with the cap',
    );
    expect((await patch(`/v1/users/${ada.user.id}`, tenant.headers, { maxOpenThreads: null })).json().data.maxOpenThreads).toBeNull();
    expect((await userOnA(tenant.headers, ada.user.id)).availability).toBe('busy');
  });
});

describe('connected', () => {
  it('is true while a socket of the user is open on any process, as another process sees it', async () => {
    const tenant = await makeTenant(a.deps);
    const bo = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Bo', roles: ['agent'] });
    expect((await userOnA(tenant.headers, bo.user.id)).connected).toBe(false);
    const first = await connect(bo.headers);
    await waitFor(async () => (await userOnA(tenant.headers, bo.user.id)).connected, 'Bo connected, as A sees it');
    await waitFor(
      async () => bus.find((e) => e.type === 'user.updated' && e.data.id === bo.user.id && e.data.connected === true),
      'user.updated connected',
    );
    const second = await connect(bo.headers);
    await closeSocket(first);
    // Closing one of two leaves him connected: wait until B has forgotten it.
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM user_sockets WHERE user_id = ${bo.user.id}`.execute(
        a.deps.db,
      );
      return rows[0]!.n === 1;
    }, 'one socket left');
    expect((await userOnA(tenant.headers, bo.user.id)).connected).toBe(true);
    await closeSocket(second);
    await waitFor(async () => !(await userOnA(tenant.headers, bo.user.id)).connected, 'Bo disconnected');
    await waitFor(
      async () => bus.find((e) => e.type === 'user.updated' && e.data.id === bo.user.id && e.data.connected === false),
      'user.updated disconnected',
    );
  });

  it('ends at once for the sockets of a process that shuts down', async () => {
    const c = await startTestContext({ database: a.database });
    const cUrl = (await c.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
    const tenant = await makeTenant(a.deps);
    const gil = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Gil', roles: ['agent'] });
    await connect(gil.headers, cUrl);
    await waitFor(async () => (await userOnA(tenant.headers, gil.user.id)).connected, 'Gil connected');
    await c.close();
    expect((await userOnA(tenant.headers, gil.user.id)).connected).toBe(false);
    await waitFor(async () => (await userOnA(tenant.headers, gil.user.id)).availability === 'offline', 'Gil offline');
  });

  it('ends with a process that died: its sockets expire, and the user goes offline', async () => {
    const tenant = await makeTenant(a.deps);
    const cy = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Cy', roles: ['agent'] });
    // What a process that died leaves behind: a row nobody refreshes, alive for two beats.
    await sql`
      INSERT INTO user_sockets (process_id, socket_id, user_id, workspace_id, expires_at)
      VALUES ('a-process-that-died', 's-1', ${cy.user.id}, ${tenant.workspace.id}, now() + interval '400 milliseconds')`.execute(a.deps.db);
    expect((await userOnA(tenant.headers, cy.user.id)).connected).toBe(true);
    // B's heartbeat deletes the expired row and the offline job follows.
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM user_sockets WHERE user_id = ${cy.user.id}`.execute(
        a.deps.db,
      );
      return rows[0]!.n === 0;
    }, 'the dead process’s row to be swept');
    expect((await userOnA(tenant.headers, cy.user.id)).connected).toBe(false);
    await waitFor(async () => (await userOnA(tenant.headers, cy.user.id)).availability === 'offline', 'Cy offline');
  });
});

describe('the automatic offline', () => {
  it('sets a user offline once their last socket has been gone for the delay, and announces it', async () => {
    const tenant = await makeTenant(a.deps);
    const dee = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Dee', roles: ['agent'] });
    const ws = await connect(dee.headers);
    await closeSocket(ws);
    await waitFor(async () => (await userOnA(tenant.headers, dee.user.id)).availability === 'offline', 'Dee offline');
    await waitFor(
      async () => bus.find((e) => e.type === 'user.updated' && e.data.id === dee.user.id && e.data.availability === 'offline'),
      'user.updated offline',
    );
  });

  it('leaves a user online whose socket came back within the delay, and never touches one who never had a socket', async () => {
    const tenant = await makeTenant(a.deps);
    const eve = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Eve', roles: ['agent'] });
    const never = await signedInUser(a.app, a, tenant.workspace.id, { name: 'Fay', roles: ['agent'] });
    await closeSocket(await connect(eve.headers));
    // B has recorded the disconnection (and queued its job) before the socket comes back.
    await waitFor(async () => {
      const row = await a.deps.db.selectFrom('users').select('disconnected_at').where('id', '=', eve.user.id).executeTakeFirstOrThrow();
      return row.disconnected_at !== null;
    }, 'the disconnection');
    const back = await connect(eve.headers);
    // The job about that disconnection has run and found the socket back.
    await waitFor(async () => {
      const { rows } = await sql<{ state: string }>`
        SELECT state FROM ${sql.raw(`${BOSS_SCHEMA}.job`)}
        WHERE name = ${USER_OFFLINE_QUEUE} AND (data->>'userId')::int = ${eve.user.id}`.execute(a.deps.db);
      return rows.length === 1 && rows[0]!.state === 'completed';
    }, 'the offline job to have run');
    expect((await userOnA(tenant.headers, eve.user.id)).availability).toBe('online');
    expect((await userOnA(tenant.headers, never.user.id)).availability).toBe('online');
    await closeSocket(back);
    await waitFor(async () => (await userOnA(tenant.headers, eve.user.id)).availability === 'offline', 'Eve offline at last');
  });
});
