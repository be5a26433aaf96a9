import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { OPERATOR_REFUSED, OPERATOR_UNCHANGED } from '../../src/users/users.service.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

const ctx = await useTestContext();
const wsUrl = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
afterAll(() => ctx.app.close());

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

async function login(email: string, password: string) {
  return ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password } });
}

/** A user of the workspace, signed in: their bearer headers. */
async function member(workspaceId: number, roles: string[]) {
  const { user, password } = await makeUser(ctx.deps, workspaceId, { roles });
  const token = (await login(user.email, password)).json().access_token as string;
  return { user, password, token, headers: { authorization: `Bearer ${token}` } };
}

async function team() {
  const tenant = await makeTenant(ctx.deps);
  const admin = await member(tenant.workspace.id, ['admin']);
  return { tenant, admin };
}

describe('GET /v1/users', () => {
  it('lists the workspace’s users to admins, agents and read keys, without password hashes', async () => {
    const { tenant, admin } = await team();
    const agent = await member(tenant.workspace.id, ['agent']);
    const readKey = await makeTenant(ctx.deps, { scopes: ['read'] });
    const outsider = await makeUser(ctx.deps, readKey.workspace.id);
    for (const headers of [admin.headers, agent.headers]) {
      const res = await call('GET', '/v1/users', headers);
      expect(res.statusCode).toBe(200);
      expect(
        res
          .json()
          .data.map((u: { id: number }) => u.id)
          .sort(),
      ).toEqual([admin.user.id, agent.user.id].sort());
      expect(res.json().data).toContainEqual({
        id: agent.user.id,
        name: 'Test User',
        email: agent.user.email,
        roles: ['agent'],
        active: true,
        availability: 'online',
        maxOpenThreads: null,
        invited: false,
        inviteExpiresAt: null,
        connected: false,
        // Only the agent's own row shows their notification settings.
        ...(headers === agent.headers ? { notify: { email: { assigned: true, mentioned: true, sla: true } } } : {}),
        createdAt: expect.any(String),
      });
      expect(res.body).not.toMatch(/argon2|password/);
    }
    const byKey = await call('GET', '/v1/users', readKey.headers);
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json().data.map((u: { id: number }) => u.id)).toEqual([outsider.user.id]);
  });

  it('pages with a cursor', async () => {
    const { tenant } = await team();
    for (let i = 0; i < 3; i++) await makeUser(ctx.deps, tenant.workspace.id);
    const first = (await call('GET', '/v1/users?limit=2', tenant.headers)).json();
    expect(first.data).toHaveLength(2);
    const second = (await call('GET', `/v1/users?limit=2&cursor=${first.meta.nextCursor}`, tenant.headers)).json();
    expect(second.data).toHaveLength(2);
    expect(second.meta.nextCursor).toBeUndefined();
    expect(new Set([...first.data, ...second.data].map((u: { id: number }) => u.id)).size).toBe(4);
  });
});

describe('POST /v1/users', () => {
  it('lets an admin add a user who can then sign in', async () => {
    const { admin } = await team();
    const res = await call('POST', '/v1/users', admin.headers, {
      name: 'Bo',
      email: 'bo.team@acme.test',
      password: 'correct horse',
      roles: ['agent', 'agent'],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({
      id: expect.any(Number),
      name: 'Bo',
      email: 'bo.team@acme.test',
      roles: ['agent'],
      active: true,
      availability: 'online',
      maxOpenThreads: null,
      invited: false,
      inviteExpiresAt: null,
      connected: false,
      createdAt: expect.any(String),
    });
    expect((await login('bo.team@acme.test', 'correct horse')).statusCode).toBe(200);
  });

  it('refuses agents and write keys (403), and bad input (409, 422) without writing', async () => {
    const { tenant, admin } = await team();
    const agent = await member(tenant.workspace.id, ['agent']);
    const writeKey = await makeTenant(ctx.deps, { scopes: ['write'] });
    const body = { name: 'X', email: 'x.team@acme.test', password: 'long enough' };
    expect((await call('POST', '/v1/users', agent.headers, body)).statusCode).toBe(403);
    expect((await call('POST', '/v1/users', writeKey.headers, body)).statusCode).toBe(403);
    const dup = await call('POST', '/v1/users', admin.headers, { ...body, email: admin.user.email.toUpperCase() });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error.code).toBe('conflict');
    for (const bad of [
      { ...body, roles: ['owner'] },
      { ...body, password: 'short' },
      { ...body, email: 'not-an-address' },
      { ...body, isAdmin: true },
    ]) {
      const res = await call('POST', '/v1/users', admin.headers, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const listed = (await call('GET', '/v1/users', admin.headers)).json().data;
    expect(listed.map((u: { email: string }) => u.email)).not.toContain('x.team@acme.test');
  });
});

describe('PATCH /v1/users/:id', () => {
  it('renames a user and changes their roles', async () => {
    const { tenant, admin } = await team();
    const agent = await member(tenant.workspace.id, ['agent']);
    const res = await call('PATCH', `/v1/users/${agent.user.id}`, admin.headers, { name: 'Renamed', roles: ['admin', 'agent'] });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: agent.user.id, name: 'Renamed', roles: ['admin', 'agent'], active: true });
    // the new role counts at once: the promoted user may now manage the team
    expect(
      (await call('POST', '/v1/users', agent.headers, { name: 'N', email: 'n.team@acme.test', password: 'long enough' })).statusCode,
    ).toBe(201);
  });

  it('refuses an unknown role, an unknown field and an empty change with 422', async () => {
    const { admin } = await team();
    for (const bad of [{ roles: ['root'] }, { email: 'new@acme.test' }, { active: 'no' }, {}]) {
      const res = await call('PATCH', `/v1/users/${admin.user.id}`, admin.headers, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
  });

  it('never lets the workspace lose its last active admin', async () => {
    const { tenant, admin } = await team();
    const self = await call('PATCH', `/v1/users/${admin.user.id}`, admin.headers, { active: false });
    expect(self.statusCode).toBe(422);
    expect(self.json().error).toEqual({ code: 'validation_failed', message: 'you cannot deactivate yourself' });
    const demote = await call('PATCH', `/v1/users/${admin.user.id}`, admin.headers, { roles: ['agent'] });
    expect(demote.statusCode).toBe(422);
    expect(demote.json().error.message).toBe('you cannot remove your own admin role');
    // an admin API key is not a person: it may not take away the only admin either
    const byKey = await call('PATCH', `/v1/users/${admin.user.id}`, tenant.headers, { active: false });
    expect(byKey.statusCode).toBe(422);
    expect(byKey.json().error.message).toBe('the workspace must keep at least one active admin');
    // with a second admin, one may deactivate the other
    const second = await member(tenant.workspace.id, ['admin']);
    expect((await call('PATCH', `/v1/users/${admin.user.id}`, second.headers, { active: false })).statusCode).toBe(200);
    const users = (await call('GET', '/v1/users', second.headers)).json().data;
    expect(users.find((u: { id: number }) => u.id === admin.user.id).active).toBe(false);
    expect(users.find((u: { id: number }) => u.id === admin.user.id).roles).toEqual(['admin']);
  });

  it('deactivation ends the user’s JWT, token and live socket at once, and they cannot sign in', async () => {
    const { tenant, admin } = await team();
    const agent = await member(tenant.workspace.id, ['agent']);
    const pat = (await call('POST', '/v1/personal-access-tokens', agent.headers, { name: 'cli' })).json().data.token as string;
    expect((await call('GET', '/api/user/user', { authorization: `Bearer ${pat}` })).statusCode).toBe(200);

    const ws = new WebSocket(`${wsUrl}/v1/realtime?token=${encodeURIComponent(agent.token)}`);
    const events: { type: string }[] = [];
    ws.on('message', (m) => events.push(JSON.parse(String(m))));
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await waitFor(async () => events.some((e) => e.type === 'ready'), 'the socket to be ready');

    const res = await call('PATCH', `/v1/users/${agent.user.id}`, admin.headers, { active: false });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.active).toBe(false);
    expect(await closed).toBe(4001);
    expect((await call('GET', '/v1/threads', agent.headers)).statusCode).toBe(401);
    expect((await call('GET', '/api/user/user', { authorization: `Bearer ${pat}` })).statusCode).toBe(401);

    const refused = await login(agent.user.email, agent.password);
    const wrong = await login(agent.user.email, 'not the password');
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toEqual(wrong.json().error);

    // their row stays, and reactivating lets them sign in again (old credentials stay ended)
    expect((await call('PATCH', `/v1/users/${agent.user.id}`, admin.headers, { active: true })).json().data.active).toBe(true);
    expect((await login(agent.user.email, agent.password)).statusCode).toBe(200);
    expect((await call('GET', '/v1/threads', agent.headers)).statusCode).toBe(401);
  });
});

describe('the operator role', () => {
  const operatorOf = async (workspaceId: number) => {
    const made = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${workspaceId}/users`,
      headers: adminHeaders(),
      payload: { name: 'Staff', email: `staff-${workspaceId}@ops.test`, password: 'operator password', roles: ['operator'] },
    });
    expect(made.statusCode).toBe(201);
    const token = (await login(`staff-${workspaceId}@ops.test`, 'operator password')).json().access_token as string;
    return { id: made.json().data.id as number, headers: { authorization: `Bearer ${token}` } };
  };

  it('is never granted through /v1/users, by an admin JWT or an admin key (422, nothing written)', async () => {
    const { tenant, admin } = await team();
    const agent = await member(tenant.workspace.id, ['agent']);
    const body = { name: 'Mallory', email: 'mallory.team@acme.test', password: 'long enough' };
    for (const headers of [admin.headers, tenant.headers]) {
      for (const roles of [['operator'], ['admin', 'operator']]) {
        const created = await call('POST', '/v1/users', headers, { ...body, roles });
        expect(created.statusCode, JSON.stringify(roles)).toBe(422);
        expect(created.json().error).toEqual({ code: 'validation_failed', message: OPERATOR_REFUSED });
        const promoted = await call('PATCH', `/v1/users/${agent.user.id}`, headers, { roles });
        expect(promoted.statusCode).toBe(422);
        expect(promoted.json().error).toEqual({ code: 'validation_failed', message: OPERATOR_REFUSED });
      }
    }
    const users = (await call('GET', '/v1/users', admin.headers)).json().data as { email: string; id: number; roles: string[] }[];
    expect(users.map((u) => u.email)).not.toContain('mallory.team@acme.test');
    expect(users.find((u) => u.id === agent.user.id)!.roles).toEqual(['agent']);
    // the refused agent's JWT still cannot reach the operator's routes
    expect((await call('GET', '/v1/operator/tenants', agent.headers)).statusCode).toBe(403);
  });

  it('is still granted by the admin key, and a workspace admin can neither change nor deactivate an operator', async () => {
    const { tenant, admin } = await team();
    const operator = await operatorOf(tenant.workspace.id);
    expect((await call('GET', '/v1/operator/tenants', operator.headers)).statusCode).toBe(200);
    for (const headers of [admin.headers, tenant.headers]) {
      for (const patch of [{ active: false }, { roles: ['agent'] }, { name: 'Renamed' }]) {
        const res = await call('PATCH', `/v1/users/${operator.id}`, headers, patch);
        expect(res.statusCode, JSON.stringify(patch)).toBe(422);
        expect(res.json().error).toEqual({ code: 'validation_failed', message: OPERATOR_UNCHANGED });
      }
    }
    const listed = (await call('GET', '/v1/users', admin.headers)).json().data as { id: number }[];
    expect(listed.find((u) => u.id === operator.id)).toMatchObject({ name: 'Staff', roles: ['operator'], active: true });
    expect((await call('GET', '/v1/operator/tenants', operator.headers)).statusCode).toBe(200);
  });
});
