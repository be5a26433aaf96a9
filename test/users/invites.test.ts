import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startSmtpServer } from '../../harness/smtp.js';
import { systemMailer } from '../../src/mail/system-mailer.js';
import type { TeamUser } from '../../src/users/users.resources.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, listenToBus } from '../threads/workflow-helpers.js';

const smtp = await startSmtpServer();
afterAll(() => smtp.close());
// The service's clock, moved forward by tests that check expiry; it starts at the real time,
// since signed-in tokens (signed by this clock) are verified against the real one.
let clock = new Date();
const ctx = await useTestContext({
  env: {
    INBOX_SMTP_URL: smtp.url,
    INBOX_MAIL_FROM: 'inbox@acme.test',
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_PUBLIC_URL: 'https://inbox.acme.test/support',
  },
  now: () => clock,
});
const tenant = await makeTenant(ctx.deps, { name: 'Acme <Support>' });
const { password: adminPassword } = await makeUser(ctx.deps, tenant.workspace.id, {
  email: 'boss@acme.test',
  name: 'Ada Boss',
  roles: ['admin'],
});
const adminToken = (
  await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: 'boss@acme.test', password: adminPassword } })
).json().access_token as string;
const asAdmin = { authorization: `Bearer ${adminToken}` };
const mailer = systemMailer(ctx.deps)!;
const bus = await listenToBus(ctx.database.url);
const INVITE_LINK = /https:\/\/inbox\.acme\.test\/support\/app\/invite#token=([\w-]+)/;

beforeEach(async () => {
  clock = new Date();
  await mailer.settled();
  smtp.reset();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url, payload, headers });
const login = (email: string, password: string) => post('/api/user/login', { email, password });
const userRows = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM users`.execute(ctx.deps.db)).rows[0]!.n);
const tokenRows = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM account_tokens`.execute(ctx.deps.db)).rows[0]!.n);

async function invite(email: string, headers: Record<string, string> = asAdmin): Promise<string> {
  const res = await post('/v1/users', { name: 'New Agent', email, roles: ['agent'] }, headers);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().data).toMatchObject({ email, active: false, roles: ['agent'] });
  const mail = smtp.mails.find((m) => m.to.includes(email));
  expect(mail, 'an invite mail').toBeDefined();
  return INVITE_LINK.exec(mail!.mail.text ?? '')![1]!;
}

describe('POST /v1/users without a password: an invite', () => {
  it('mails a single-use link; accepting it sets the password and activates the user', async () => {
    const token = await invite('grace@acme.test');
    const [{ mail }] = smtp.mails as [(typeof smtp.mails)[number]];
    expect(mail.subject).toBe('You are invited to Acme <Support>');
    expect(mail.text).toContain('Ada Boss has invited you to answer conversations with the team of Acme <Support>');
    expect(mail.text).toContain('expires in 7 days');
    expect(mail.html).toContain('Acme &#60;Support&#62;');
    expect(mail.html).not.toContain('Acme <Support>');
    expect(mail.html).toContain(`href="https://inbox.acme.test/support/app/invite#token=${token}"`);

    // Listed as invited (not deactivated) until they accept.
    const listed = async () =>
      ((await ctx.app.inject({ method: 'GET', url: '/v1/users?limit=100', headers: asAdmin })).json().data as TeamUser[]).find(
        (u) => u.email === 'grace@acme.test',
      )!;
    expect(await listed()).toMatchObject({ active: false, invited: true });
    const accepted = await post('/api/user/invite/accept', { token, password: 'grace chose this' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(await listed()).toMatchObject({ active: true, invited: false });
    expect(accepted.json().data).toMatchObject({ email: 'grace@acme.test', roles: ['agent'], workspaces_id: tenant.workspace.id });
    expect((await login('grace@acme.test', 'grace chose this')).statusCode).toBe(200);
    const again = await post('/api/user/invite/accept', { token, password: 'mallory chose this' });
    expect(again.statusCode).toBe(401);
    expect((await login('grace@acme.test', 'grace chose this')).statusCode).toBe(200);
  });

  it('announces the user who accepted as user.updated, active, to the team', async () => {
    const token = await invite('hopper@acme.test');
    const accepted = await post('/api/user/invite/accept', { token, password: 'hopper chose this' });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const id = accepted.json().data.id as number;
    const event = await waitFor(async () => bus.find((e) => e.type === 'user.updated' && e.data.id === id), 'user.updated');
    expect(event.workspaceId).toBe(tenant.workspace.id);
    expect(event.data).toMatchObject({ id, email: 'hopper@acme.test', active: true, invited: false, availability: 'online' });
  });

  it('routes the waiting threads of their team to the user who accepted, in that commit', async () => {
    const token = await invite('lovelace@acme.test');
    const invitee = (await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'lovelace@acme.test').executeTakeFirstOrThrow())
      .id;
    const team = await post('/v1/teams', { name: 'Night shift', autoAssign: true }, asAdmin);
    const teamId = team.json().data.id as number;
    const members = await ctx.app.inject({
      method: 'PUT',
      url: `/v1/teams/${teamId}/members`,
      headers: asAdmin,
      payload: { userIds: [invitee] },
    });
    expect(members.statusCode, members.body).toBe(200);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    const moved = await ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${connection.id}`, headers: asAdmin, payload: { teamId } });
    expect(moved.statusCode, moved.body).toBe(200);
    const waiting = await inbound(ctx, connection, 'night-owl', 'night-owl-1');
    const assigneeOf = async () =>
      (await ctx.deps.db.selectFrom('threads').select('assignee_id').where('id', '=', waiting).executeTakeFirstOrThrow()).assignee_id;
    expect(await assigneeOf()).toBeNull();
    expect((await post('/api/user/invite/accept', { token, password: 'lovelace chose this' })).statusCode).toBe(200);
    expect(await assigneeOf()).toBe(invitee);
  });

  it('an invited user cannot sign in before accepting', async () => {
    await invite('waiting@acme.test');
    const row = await ctx.deps.db.selectFrom('users').selectAll().where('email', '=', 'waiting@acme.test').executeTakeFirstOrThrow();
    expect(row.active).toBe(false);
    expect((await login('waiting@acme.test', 'any password at all')).statusCode).toBe(401);
  });

  it('is in the audit log as user.invited, by the admin who invited', async () => {
    await invite('logged@acme.test');
    const row = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'logged@acme.test').executeTakeFirstOrThrow();
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/audit-log?action=user.invited', headers: asAdmin });
    expect(res.statusCode, res.body).toBe(200);
    const entry = res.json().data.find((e: { target: { id: number } }) => e.target.id === row.id);
    expect(entry).toMatchObject({
      actor: { type: 'user', name: 'Ada Boss' },
      target: { type: 'user', id: row.id },
      changes: {
        name: { old: null, new: 'New Agent' },
        email: { old: null, new: 'logged@acme.test' },
        roles: { old: null, new: ['agent'] },
      },
    });
  });

  it('is in the audit log as user.invite_accepted when the person accepts, by them, from their address, without the password', async () => {
    const token = await invite('joined@acme.test');
    const accepted = await ctx.app.inject({
      method: 'POST',
      url: '/api/user/invite/accept',
      payload: { token, password: 'joined chose this' },
      remoteAddress: '198.51.100.23',
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    const id = accepted.json().data.id as number;
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/audit-log?action=user.invite_accepted', headers: asAdmin });
    expect(res.statusCode, res.body).toBe(200);
    const entry = res.json().data.find((e: { target: { id: number } }) => e.target.id === id);
    expect(entry).toMatchObject({
      actor: { type: 'user', id, name: 'New Agent' },
      target: { type: 'user', id },
      ip: '198.51.100.23',
      changes: { active: { old: false, new: true } },
    });
    expect(JSON.stringify(entry)).not.toContain('joined chose this');
  });

  it('deactivating an invited user ends their invite', async () => {
    const token = await invite('changed.mind@acme.test');
    const row = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'changed.mind@acme.test').executeTakeFirstOrThrow();
    const patched = await ctx.app.inject({ method: 'PATCH', url: `/v1/users/${row.id}`, payload: { active: false }, headers: asAdmin });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ active: false, invited: false });
    expect((await post('/api/user/invite/accept', { token, password: 'let me in anyway' })).statusCode).toBe(401);
    expect((await login('changed.mind@acme.test', 'let me in anyway')).statusCode).toBe(401);
  });

  it('refuses a link after 7 days', async () => {
    const token = await invite('slow@acme.test');
    clock = new Date(clock.getTime() + 7 * 24 * 3600 * 1000 + 1);
    expect((await post('/api/user/invite/accept', { token, password: 'slow but sure pw' })).statusCode).toBe(401);
  });

  it('inviting the same e-mail again sends a new link to the person not signed up yet (an expired invite is no dead end)', async () => {
    // The admin's session would have ended in those 7 days: the workspace's admin key invites again.
    const first = await invite('on.leave@acme.test');
    clock = new Date(clock.getTime() + 7 * 24 * 3600 * 1000 + 1);
    expect((await post('/api/user/invite/accept', { token: first, password: 'back from leave' })).statusCode).toBe(401);
    const before = await userRows();
    await mailer.settled();
    smtp.reset();

    const again = await post('/v1/users', { name: 'On Leave', email: 'On.Leave@acme.test', roles: ['admin'] }, tenant.headers);
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().data).toMatchObject({
      email: 'on.leave@acme.test',
      name: 'On Leave',
      roles: ['admin'],
      active: false,
      invited: true,
    });
    expect(await userRows()).toBe(before);
    const mail = smtp.mails.find((m) => m.to.includes('on.leave@acme.test'));
    const second = INVITE_LINK.exec(mail?.mail.text ?? '')![1]!;
    expect(second).not.toBe(first);
    expect((await post('/api/user/invite/accept', { token: first, password: 'back from leave' })).statusCode).toBe(401);
    expect((await post('/api/user/invite/accept', { token: second, password: 'back from leave' })).statusCode).toBe(200);
    const signedIn = await login('on.leave@acme.test', 'back from leave');
    expect(signedIn.json().data).toMatchObject({ id: again.json().data.id, roles: ['admin'] });

    const audit = await ctx.app.inject({ method: 'GET', url: '/v1/audit-log?action=user.invited', headers: tenant.headers });
    const entries = (audit.json().data as { target: { id: number }; changes: object }[]).filter(
      (e) => e.target.id === again.json().data.id,
    );
    expect(entries.map((e) => e.changes)).toEqual([
      { name: { old: 'New Agent', new: 'On Leave' }, roles: { old: ['agent'], new: ['admin'] } },
      { name: { old: null, new: 'New Agent' }, email: { old: null, new: 'on.leave@acme.test' }, roles: { old: null, new: ['agent'] } },
    ]);

    // Anyone else with the address is still a 409: a member (active or deactivated), another workspace's invitee.
    const other = await makeTenant(ctx.deps);
    expect((await post('/v1/users', { name: 'Elsewhere', email: 'elsewhere@acme.test', roles: [] }, other.headers)).statusCode).toBe(201);
    const deactivated = await invite('former@acme.test', tenant.headers);
    const former = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'former@acme.test').executeTakeFirstOrThrow();
    await ctx.app.inject({ method: 'PATCH', url: `/v1/users/${former.id}`, payload: { active: false }, headers: tenant.headers });
    for (const email of ['on.leave@acme.test', 'former@acme.test', 'elsewhere@acme.test', 'boss@acme.test']) {
      const res = await post('/v1/users', { name: 'Dup', email, roles: [] }, tenant.headers);
      expect(res.statusCode, email).toBe(409);
    }
    expect((await post('/api/user/invite/accept', { token: deactivated, password: 'let me in anyway' })).statusCode).toBe(401);
  });

  it('shows when an invited user’s link stops working (inviteExpiresAt), a new invite moving it, null once signed up', async () => {
    const week = 7 * 24 * 3600 * 1000;
    const first = await invite('pending@acme.test');
    const listed = async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/users?limit=100', headers: tenant.headers });
      return (res.json().data as TeamUser[]).find((u) => u.email === 'pending@acme.test')!;
    };
    expect((await listed()).inviteExpiresAt).toBe(new Date(clock.getTime() + week).toISOString());
    clock = new Date(clock.getTime() + week + 1);
    // Expired, still invited: the date says so.
    expect(await listed()).toMatchObject({ invited: true, inviteExpiresAt: new Date(clock.getTime() - 1).toISOString() });
    const again = await post('/v1/users', { name: 'Pending', email: 'pending@acme.test', roles: ['agent'] }, tenant.headers);
    expect(again.json().data.inviteExpiresAt).toBe(new Date(clock.getTime() + week).toISOString());
    expect((await listed()).inviteExpiresAt).toBe(new Date(clock.getTime() + week).toISOString());
    expect((await post('/api/user/invite/accept', { token: first, password: 'too late for this' })).statusCode).toBe(401);
    await mailer.settled();
    const second = INVITE_LINK.exec(smtp.mails.filter((m) => m.to.includes('pending@acme.test')).at(-1)?.mail.text ?? '')![1]!;
    expect((await post('/api/user/invite/accept', { token: second, password: 'in time this time' })).statusCode).toBe(200);
    expect(await listed()).toMatchObject({ active: true, invited: false, inviteExpiresAt: null });
  });

  it('sends one person at most 5 new invites an hour (429 then), so no mailbox is flooded', async () => {
    await invite('patient@acme.test');
    const again = () => post('/v1/users', { name: 'New Agent', email: 'patient@acme.test', roles: ['agent'] }, asAdmin);
    for (let i = 0; i < 5; i++) expect((await again()).statusCode).toBe(201);
    await mailer.settled();
    smtp.reset();
    const sixth = await again();
    expect(sixth.statusCode, sixth.body).toBe(429);
    expect(sixth.json().error.code).toBe('rate_limited');
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
    await mailer.settled();
    expect(smtp.mails).toHaveLength(0);
    clock = new Date(clock.getTime() + 3600 * 1000 + 1000);
    expect((await again()).statusCode).toBe(201);
  });

  it('a bad password (short, or the e-mail) leaves the link unspent', async () => {
    const token = await invite('picky@acme.test');
    expect((await post('/api/user/invite/accept', { token, password: 'short one' })).statusCode).toBe(422);
    const email = await post('/api/user/invite/accept', { token, password: 'PICKY@acme.test' });
    expect(email.statusCode).toBe(422);
    expect(email.json().error.message).toBe('password: must not be your e-mail address');
    expect((await post('/api/user/invite/accept', { token, password: 'picky but fine pw' })).statusCode).toBe(200);
  });

  it('works with an admin API key too (the mail names no inviter)', async () => {
    await invite('keyed@acme.test', tenant.headers);
    expect(smtp.mails[0]!.mail.text).toContain('You have been invited to answer conversations');
  });

  it('a user created with a password works as before: active at once, no mail', async () => {
    const res = await post('/v1/users', { name: 'Direct', email: 'direct@acme.test', password: 'long enough' }, asAdmin);
    expect(res.statusCode).toBe(201);
    expect(res.json().data.active).toBe(true);
    expect((await login('direct@acme.test', 'long enough')).statusCode).toBe(200);
    await mailer.settled();
    expect(smtp.mails).toHaveLength(0);
  });

  it('a mail the server refuses adds nobody (502) and a refused body writes and mails nothing', async () => {
    smtp.refuse('bounced@acme.test', 550);
    const users = await userRows();
    const tokens = await tokenRows();
    const bounced = await post('/v1/users', { name: 'Bounced', email: 'bounced@acme.test' }, asAdmin);
    expect(bounced.statusCode).toBe(502);
    expect(bounced.json().error.code).toBe('provider_error');
    expect(bounced.json().error.message).toContain('the invite could not be sent, so the user was not added');
    for (const bad of [
      { name: 'Dup', email: 'BOSS@acme.test' },
      { name: 'Op', email: 'op@acme.test', roles: ['operator'] },
      { name: 'Bad', email: 'not an address' },
      { email: 'nameless@acme.test' },
    ]) {
      const res = await post('/v1/users', bad, asAdmin);
      expect([409, 422], JSON.stringify(bad)).toContain(res.statusCode);
    }
    expect(await userRows()).toBe(users);
    expect(await tokenRows()).toBe(tokens);
    expect(smtp.mails).toHaveLength(0);
    const garbage = await post('/api/user/invite/accept', { token: 'not-a-token', password: 'whatever it is pw' });
    expect(garbage.statusCode).toBe(401);
  });
});
