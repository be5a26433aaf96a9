import { describe, expect, it } from 'vitest';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus, signedInUser, transcriptLines } from '../threads/workflow-helpers.js';

const ctx = await useTestContext();
const bus = await listenToBus(ctx.database.url);
const tenant = await makeTenant(ctx.deps);
const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Ada', roles: ['admin'] });
const bo = await signedInUser(ctx.app, ctx, tenant.workspace.id, { name: 'Bo', roles: ['agent'] });
const other = await makeTenant(ctx.deps);
const outsider = await makeUser(ctx.deps, other.workspace.id);

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
let seq = 0;
const newTeam = async (headers = tenant.headers, name = `Team ${++seq}`) => {
  const res = await call('POST', '/v1/teams', headers, { name });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; name: string };
};

describe('/v1/teams', () => {
  it('lets an admin create, read, rename and list teams in the Team shape', async () => {
    const res = await call('POST', '/v1/teams', ada.headers, { name: 'Billing', description: 'Invoices and refunds' });
    expect(res.statusCode, res.body).toBe(201);
    const team = res.json().data;
    expect(team).toEqual({
      id: expect.any(Number),
      name: 'Billing',
      description: 'Invoices and refunds',
      memberIds: [],
      autoAssign: false,
      businessHours: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await call('GET', `/v1/teams/${team.id}`, bo.headers)).json().data).toEqual(team);
    const renamed = await call('PATCH', `/v1/teams/${team.id}`, ada.headers, { name: 'Billing EU', description: null });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().data).toMatchObject({ name: 'Billing EU', description: null });
    const list = await call('GET', '/v1/teams?limit=100', bo.headers);
    expect(list.json().data.map((t: { id: number }) => t.id)).toContain(team.id);
  });

  it('refuses writes to agents and read keys, and reads of another workspace', async () => {
    const team = await newTeam();
    expect((await call('POST', '/v1/teams', bo.headers, { name: 'Agents' })).statusCode).toBe(403);
    expect((await call('PATCH', `/v1/teams/${team.id}`, bo.headers, { name: 'x' })).statusCode).toBe(403);
    expect((await call('DELETE', `/v1/teams/${team.id}`, bo.headers)).statusCode).toBe(403);
    expect((await call('PUT', `/v1/teams/${team.id}/members`, bo.headers, { userIds: [] })).statusCode).toBe(403);
    const readKey = await makeTenant(ctx.deps, { scopes: ['read'] });
    expect((await call('POST', '/v1/teams', readKey.headers, { name: 'Keys' })).statusCode).toBe(403);
    expect((await call('GET', '/v1/teams', readKey.headers)).statusCode).toBe(200);
    const foreign = await call('GET', `/v1/teams/${team.id}`, other.headers);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('not_found');
    expect((await call('PATCH', `/v1/teams/${team.id}`, other.headers, { name: 'Mine' })).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/teams/${team.id}`, other.headers)).statusCode).toBe(404);
  });

  it('keeps names 1–60 characters and unique per workspace whatever the case (409)', async () => {
    for (const name of ['', 'x'.repeat(61), '   ']) {
      const res = await call('POST', '/v1/teams', tenant.headers, { name });
      expect(res.statusCode, name).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await call('POST', '/v1/teams', tenant.headers, { name: 'y'.repeat(60) })).statusCode).toBe(201);
    expect((await call('POST', '/v1/teams', tenant.headers, { name: 'Sales', color: 'red' })).statusCode).toBe(422);
    const sales = await newTeam(tenant.headers, 'Sales');
    const again = await call('POST', '/v1/teams', tenant.headers, { name: 'sales' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toEqual({ code: 'conflict', message: 'a team named "sales" already exists in this workspace' });
    const support = await newTeam(tenant.headers, 'Support');
    expect((await call('PATCH', `/v1/teams/${support.id}`, tenant.headers, { name: 'SALES' })).statusCode).toBe(409);
    expect((await call('PATCH', `/v1/teams/${sales.id}`, tenant.headers, { name: 'SALES' })).statusCode).toBe(200);
    // Another workspace may use the same name.
    expect((await call('POST', '/v1/teams', other.headers, { name: 'Sales' })).statusCode).toBe(201);
  });

  it('replaces the members with PUT …/members, users of the workspace only (422, nothing written)', async () => {
    const team = await newTeam();
    const first = await call('PUT', `/v1/teams/${team.id}/members`, ada.headers, { userIds: [bo.user.id, ada.user.id, bo.user.id] });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data.memberIds).toEqual([ada.user.id, bo.user.id].sort((a, b) => a - b));
    const bad = await call('PUT', `/v1/teams/${team.id}/members`, ada.headers, { userIds: [bo.user.id, outsider.user.id] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.message).toContain(String(outsider.user.id));
    expect((await call('GET', `/v1/teams/${team.id}`, ada.headers)).json().data.memberIds).toEqual(first.json().data.memberIds);
    const second = await call('PUT', `/v1/teams/${team.id}/members`, ada.headers, { userIds: [bo.user.id] });
    expect(second.json().data.memberIds).toEqual([bo.user.id]);
    expect((await call('PUT', `/v1/teams/${team.id}/members`, ada.headers, { userIds: ['x'] })).statusCode).toBe(422);
    expect((await call('PUT', `/v1/teams/999999/members`, ada.headers, { userIds: [] })).statusCode).toBe(404);
  });
});

describe('teams on threads and connections', () => {
  const connection = makeConnection(ctx.deps, tenant.workspace.id);

  it('moves a thread into a team with PATCH {teamId}, an activity line each way; a foreign team is 422', async () => {
    const team = await newTeam(tenant.headers, 'Returns');
    const threadId = await inbound(ctx, await connection, 'c-move', 'wamid.move');
    const moved = await call('PATCH', `/v1/threads/${threadId}`, ada.headers, { teamId: team.id });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data.teamId).toBe(team.id);
    const foreign = await newTeam(other.headers, 'Foreign');
    const refused = await call('PATCH', `/v1/threads/${threadId}`, ada.headers, { teamId: foreign.id, status: 'resolved' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.message).toMatch(/teamId/);
    const out = await call('PATCH', `/v1/threads/${threadId}`, ada.headers, { teamId: null });
    expect(out.json().data).toMatchObject({ teamId: null, status: 'open' });
    const lines = (await transcriptLines(ctx, threadId)).map((l) => [l.text, l.author_id]);
    expect(lines).toEqual([
      ['Ada moved the conversation to the team Returns', ada.user.id],
      ['Ada removed the conversation from the team Returns', ada.user.id],
    ]);
  });

  it('filters GET /v1/threads by ?teamId= and ?teamId=none', async () => {
    const team = await newTeam();
    const inTeam = await inbound(ctx, await connection, 'c-f1', 'wamid.f1');
    const noTeam = await inbound(ctx, await connection, 'c-f2', 'wamid.f2');
    await call('PATCH', `/v1/threads/${inTeam}`, ada.headers, { teamId: team.id });
    const ids = async (q: string) =>
      (await call('GET', `/v1/threads?limit=100&${q}`, tenant.headers)).json().data.map((t: { id: number }) => t.id) as number[];
    expect(await ids(`teamId=${team.id}`)).toEqual([inTeam]);
    const none = await ids('teamId=none');
    expect(none).toContain(noTeam);
    expect(none).not.toContain(inTeam);
    const bad = await call('GET', '/v1/threads?teamId=abc', tenant.headers);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.message).toMatch(/^teamId/);
  });

  it('starts new threads of a connection in its team; teamId is settable on create and PATCH', async () => {
    const team = await newTeam();
    const created = await call('POST', '/v1/connections', tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: 'acct-team-1',
      name: 'Team line',
      teamId: team.id,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.teamId).toBe(team.id);
    const conn = { integrationKey: 'whatsapp', externalAccountId: 'acct-team-1' };
    const threadId = await inbound(ctx, conn, 'c-conn', 'wamid.conn');
    expect((await call('GET', `/v1/threads/${threadId}`, tenant.headers)).json().data.teamId).toBe(team.id);

    const foreign = await newTeam(other.headers);
    const refused = await call('POST', '/v1/connections', tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: 'acct-team-2',
      name: 'x',
      teamId: foreign.id,
    });
    expect(refused.statusCode).toBe(422);
    expect(await ctx.deps.db.selectFrom('connections').select('id').where('external_account_id', '=', 'acct-team-2').execute()).toEqual([]);
    const id = created.json().data.id;
    expect((await call('PATCH', `/v1/connections/${id}`, tenant.headers, { teamId: foreign.id })).statusCode).toBe(422);
    const cleared = await call('PATCH', `/v1/connections/${id}`, tenant.headers, { teamId: null });
    expect(cleared.json().data.teamId).toBeNull();
    const next = await inbound(ctx, conn, 'c-conn-2', 'wamid.conn2');
    expect((await call('GET', `/v1/threads/${next}`, tenant.headers)).json().data.teamId).toBeNull();
    // A thread already in a team keeps it when its contact writes again.
    await inbound(ctx, conn, 'c-conn', 'wamid.conn3');
    expect((await call('GET', `/v1/threads/${threadId}`, tenant.headers)).json().data.teamId).toBe(team.id);
  });

  it('deleting a team leaves its threads and connections without one', async () => {
    const team = await newTeam();
    const conn = await makeConnection(ctx.deps, tenant.workspace.id);
    await call('PATCH', `/v1/connections/${conn.id}`, tenant.headers, { teamId: team.id });
    const threadId = await inbound(ctx, conn, 'c-del', 'wamid.del');
    expect((await call('GET', `/v1/threads/${threadId}`, tenant.headers)).json().data.teamId).toBe(team.id);
    const res = await call('DELETE', `/v1/teams/${team.id}`, ada.headers);
    expect(res.statusCode).toBe(200);
    expect((await call('GET', `/v1/threads/${threadId}`, tenant.headers)).json().data.teamId).toBeNull();
    // Told as a change of the thread's team: an activity line and thread.updated.
    expect((await transcriptLines(ctx, threadId)).map((l) => [l.text, l.author_id])).toEqual([
      [expect.stringMatching(/^Ada removed the conversation from the team Team \d+$/), ada.user.id],
    ]);
    await waitFor(
      async () =>
        bus.some((e) => {
          const data = e.data as { id: number; teamId: number | null };
          return e.type === 'thread.updated' && data.id === threadId && data.teamId === null;
        }),
      'thread.updated of the thread the team left',
    );
    const connections = (await call('GET', '/v1/connections?limit=100', tenant.headers)).json().data;
    expect(connections.find((c: { id: number }) => c.id === conn.id).teamId).toBeNull();
    expect((await call('GET', `/v1/teams/${team.id}`, ada.headers)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/teams/${team.id}`, ada.headers)).statusCode).toBe(404);
  });

  it('a team deleted while a thread or connection is put in it: 200 or 422, never 500; nothing keeps it', async () => {
    for (let round = 0; round < 3; round++) {
      const team = await newTeam();
      const conn = await makeConnection(ctx.deps, tenant.workspace.id);
      const threadId = await inbound(ctx, conn, `c-race-${round}`, `wamid.race-${round}`);
      const answers = await Promise.all([
        call('PATCH', `/v1/threads/${threadId}`, ada.headers, { teamId: team.id }),
        call('PATCH', `/v1/connections/${conn.id}`, tenant.headers, { teamId: team.id }),
        call('POST', `/v1/engage/workspaces/${tenant.workspace.id}/connections`, adminHeaders(), {
          integrationKey: 'sms',
          externalAccountId: `+1555010${round}`,
          name: 'SMS',
          teamId: team.id,
        }),
        call('DELETE', `/v1/teams/${team.id}`, ada.headers),
      ]);
      for (const res of answers) expect([200, 201, 422], res.body).toContain(res.statusCode);
      expect(answers[3]!.statusCode).toBe(200);
      const rows = await ctx.deps.db.selectFrom('threads').select('team_id').where('id', '=', threadId).execute();
      expect(rows).toEqual([{ team_id: null }]);
      const held = await ctx.deps.db.selectFrom('connections').select('id').where('team_id', '=', team.id).execute();
      expect(held).toEqual([]);
      // A thread moved in before the deletion is told it left, as any thread of the team is.
      if (answers[0]!.statusCode === 200)
        expect((await transcriptLines(ctx, threadId)).map((l) => l.text)).toContainEqual(
          expect.stringMatching(/^Ada removed the conversation from the team /),
        );
    }
  });
});
