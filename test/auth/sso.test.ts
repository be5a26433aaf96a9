import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { SSO_SECRET_DOES_NOT_OPEN } from '../../src/auth/sso.js';
import { totpCode } from '../../src/auth/totp.js';
import { checkSsoSetting } from '../../src/workspaces/sso-setting.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { signInAtIdp, startTestIdp } from '../helpers/oidc.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound } from '../threads/workflow-helpers.js';

const PUBLIC_URL = 'http://inbox.test';
const ctx = await useTestContext({ env: { INBOX_PUBLIC_URL: PUBLIC_URL, INBOX_ALLOW_PRIVATE_SSO: 'true' } });
const idp = await startTestIdp(`${PUBLIC_URL}/auth/sso/callback`);
afterAll(() => idp.close());

const tenant = await makeTenant(ctx.deps);
const workspaceId = tenant.workspace.id;
const patchWorkspace = (payload: object, headers = tenant.headers) =>
  ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers, payload });
const ssoSetting = (extra: object = {}) => ({
  issuer: idp.issuer,
  clientId: idp.clientId,
  clientSecret: idp.clientSecret,
  allowedDomains: ['Acme.test'],
  defaultRoles: ['agent'] as ('agent' | 'admin')[],
  ...extra,
});
{
  const res = await patchWorkspace({ sso: ssoSetting() });
  if (res.statusCode !== 200) throw new Error(res.body);
}

idp.accounts.set('ada', { email: 'ada@acme.test', email_verified: true, name: 'Ada Lovelace' });
idp.accounts.set('eve', { email: 'eve@elsewhere.test', email_verified: true });
idp.accounts.set('unverified', { email: 'una@acme.test', email_verified: false });

const STATE_COOKIE = 'inbox_sso_state';

/** Starts a sign-in at the service: where it sends the browser, and the state cookie it set. */
async function start(id = workspaceId) {
  const res = await ctx.app.inject({ method: 'GET', url: `/auth/sso/${id}/start` });
  expect(res.statusCode, res.body).toBe(302);
  const cookie = String(res.headers['set-cookie']);
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('Path=/auth/sso/callback');
  const state = new RegExp(`${STATE_COOKIE}=([^;]+)`).exec(cookie)![1]!;
  return { location: String(res.headers.location), state };
}

/** The browser coming back from the identity provider to the callback, with the given state cookie. */
const callback = (url: URL, state: string | undefined) =>
  ctx.app.inject({
    method: 'GET',
    url: `${url.pathname}${url.search}`,
    headers: state === undefined ? {} : { cookie: `${STATE_COOKIE}=${state}` },
  });

/** The whole flow as a browser goes through it; answers the callback's answer. */
async function ssoFlow(accountId: string) {
  const { location, state } = await start();
  const back = await signInAtIdp(location, accountId);
  expect(back.origin + back.pathname).toBe(`${PUBLIC_URL}/auth/sso/callback`);
  return callback(back, state);
}

/** What the console does with `/app#code=…`: exchanges the auth code for a session. */
async function exchange(location: string) {
  const code = /^http:\/\/inbox\.test\/app#code=(.+)$/.exec(location)?.[1];
  expect(code, location).toBeDefined();
  const res = await ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: decodeURIComponent(code!) } });
  expect(res.statusCode, res.body).toBe(200);
  // The console's session outlives a reload: the exchange sets the refresh cookie, as a login does.
  const cookie = /^inbox_refresh=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1];
  expect(cookie, 'the refresh cookie').toBeDefined();
  const refreshed = await ctx.app.inject({ method: 'POST', url: '/api/user/refresh', headers: { cookie: `inbox_refresh=${cookie}` } });
  expect(refreshed.statusCode, refreshed.body).toBe(200);
  expect(refreshed.json().data.id).toBe(res.json().data.id);
  return res.json().access_token as string;
}

const me = async (token: string) =>
  (await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: `Bearer ${token}` } })).json().data;

const auditActions = async () =>
  (
    await sql<{ action: string; target_id: string | null; changes: Record<string, { new: unknown }> | null }>`
      SELECT action, target_id, changes FROM audit_log WHERE workspace_id = ${workspaceId} ORDER BY id`.execute(ctx.deps.db)
  ).rows;

describe('the sso setting', () => {
  it('answers it without the client secret, keeps the secret sealed, and audits it as "[set]"', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/workspace', headers: tenant.headers });
    expect(res.json().data.sso).toEqual({
      issuer: idp.issuer,
      clientId: idp.clientId,
      allowedDomains: ['acme.test'],
      defaultRoles: ['agent'],
      enforce: false,
    });
    expect(res.body).not.toContain(idp.clientSecret);
    const row = await ctx.deps.db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirstOrThrow();
    expect(row.sso_client_secret).not.toBeNull();
    expect(row.sso_client_secret!.toString('latin1')).not.toContain(idp.clientSecret);
    expect(JSON.stringify(row.settings)).not.toContain(idp.clientSecret);
    const entry = (await auditActions()).find((e) => e.action === 'workspace.settings_changed');
    expect(entry?.changes?.sso?.new).toMatchObject({ clientSecret: '[set]', clientId: idp.clientId });
    expect(JSON.stringify(await auditActions())).not.toContain(idp.clientSecret);
  });

  it('keeps the secret when it is left out, refuses a first setting without one, the operator role and http without the switch', async () => {
    const { clientSecret: _kept, ...withoutSecret } = ssoSetting();
    expect((await patchWorkspace({ sso: withoutSecret })).statusCode).toBe(200);
    const other = await makeTenant(ctx.deps);
    const missing = await patchWorkspace({ sso: withoutSecret }, other.headers);
    expect(missing.statusCode, missing.body).toBe(422);
    expect(missing.json().error.message).toContain('clientSecret');
    expect((await patchWorkspace({ sso: ssoSetting({ defaultRoles: ['operator'] }) }, other.headers)).statusCode).toBe(422);
    expect(() => checkSsoSetting(ssoSetting({ issuer: 'http://idp.example' }), { allowPrivate: false, secretStored: true })).toThrow(
      /must be https/,
    );
    expect(checkSsoSetting(ssoSetting({ issuer: 'https://idp.example' }), { allowPrivate: false, secretStored: true }).issuer).toBe(
      'https://idp.example',
    );
  });

  it('404s a start for a workspace without single sign-on', async () => {
    const other = await makeTenant(ctx.deps);
    const res = await ctx.app.inject({ method: 'GET', url: `/auth/sso/${other.workspace.id}/start` });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
  });

  it('answers a clear 409 when the sealed client secret does not open, and goes on for other workspaces', async () => {
    const other = await makeTenant(ctx.deps);
    expect((await patchWorkspace({ sso: ssoSetting() }, other.headers)).statusCode).toBe(200);
    // The sealed value is one that does not open: another key's, or altered.
    await ctx.deps.db
      .updateTable('workspaces')
      .set({ sso_client_secret: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
      .where('id', '=', other.workspace.id)
      .execute();
    const res = await ctx.app.inject({ method: 'GET', url: `/auth/sso/${other.workspace.id}/start` });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error).toEqual({ code: 'conflict', message: SSO_SECRET_DOES_NOT_OPEN });
    await start();
  });

  it('refuses an issuer on a loopback address unless INBOX_ALLOW_PRIVATE_SSO', async () => {
    const other = await makeTenant(ctx.deps);
    expect((await patchWorkspace({ sso: ssoSetting() }, other.headers)).statusCode).toBe(200);
    ctx.deps.config.allowPrivateSso = false;
    try {
      const res = await ctx.app.inject({ method: 'GET', url: `/auth/sso/${other.workspace.id}/start` });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json().error.message).toContain('127.0.0.1 is a loopback address');
    } finally {
      ctx.deps.config.allowPrivateSso = true;
    }
  });
});

describe('signing in with the identity provider', () => {
  it('creates a user of an allowed domain with the default roles, then finds the same user; the console exchanges the code', async () => {
    const start1 = await start();
    const authorize = new URL(start1.location);
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('state')).toBe(start1.state);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/auth/sso/callback`);

    const first = await callback(await signInAtIdp(start1.location, 'ada'), start1.state);
    expect(first.statusCode, first.body).toBe(302);
    const user = await me(await exchange(String(first.headers.location)));
    expect(user).toMatchObject({ email: 'ada@acme.test', name: 'Ada Lovelace', workspaces_id: workspaceId });
    const created = await ctx.deps.db.selectFrom('users').selectAll().where('email', '=', 'ada@acme.test').executeTakeFirstOrThrow();
    expect(created.roles).toEqual(['agent']);

    const second = await ssoFlow('ada');
    expect(second.statusCode, second.body).toBe(302);
    expect((await me(await exchange(String(second.headers.location)))).id).toBe(user.id);
    const users = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'ada@acme.test').execute();
    expect(users).toHaveLength(1);

    const entries = await auditActions();
    expect(entries.filter((e) => e.action === 'user.created' && e.target_id === String(user.id))).toHaveLength(1);
    expect(entries.filter((e) => e.action === 'sign_in.sso' && e.target_id === String(user.id))).toHaveLength(2);
  });

  it('refuses a tampered state, a callback without the state cookie, and a callback replayed', async () => {
    const { location, state } = await start();
    const back = await signInAtIdp(location, 'ada');
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${state.slice(0, -2)}xx`);
    const wrong = await callback(tampered, state);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.message).toContain('state mismatch');
    expect((await callback(back, undefined)).statusCode).toBe(401);

    const ok = await callback(back, state);
    expect(ok.statusCode, ok.body).toBe(302);
    const replayed = await callback(back, state);
    expect(replayed.statusCode).toBe(401);
    expect(replayed.json().error.message).toContain('unknown, used or expired');
  });

  it('refuses an ID token whose nonce is not the sign-in’s', async () => {
    const { location, state } = await start();
    // The token answered for another sign-in: the nonce this sign-in expects is another one.
    await ctx.deps.db.updateTable('sso_logins').set({ nonce: 'a-nonce-of-another-sign-in' }).execute();
    const res = await callback(await signInAtIdp(location, 'ada'), state);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.message).toMatch(/nonce/);
    const failed = (await auditActions()).filter((e) => e.action === 'sign_in.sso_failed').at(-1);
    expect(String(failed?.changes?.reason?.new)).toMatch(/nonce/);
  });

  /** A refusal at the callback: the error envelope, audited with its reason, and no session begun. */
  async function expectRefused(run: () => ReturnType<typeof callback>, reason: RegExp) {
    const codes = async () => (await ctx.deps.db.selectFrom('auth_codes').select('code_hash').execute()).length;
    const signIns = async () => (await auditActions()).filter((e) => e.action === 'sign_in.sso').length;
    const before = { codes: await codes(), signIns: await signIns() };
    const res = await run();
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect(res.json().error.message).toMatch(reason);
    const failed = (await auditActions()).filter((e) => e.action === 'sign_in.sso_failed').at(-1);
    expect(String(failed?.changes?.reason?.new)).toMatch(reason);
    expect({ codes: await codes(), signIns: await signIns() }).toEqual(before);
  }

  it('refuses an authorization code that expired before the callback traded it', async () => {
    idp.authorizationCodeTtl = 1;
    try {
      await expectRefused(async () => {
        const { location, state } = await start();
        const back = await signInAtIdp(location, 'ada');
        const code = back.searchParams.get('code')!;
        // Until the provider's clock says the code's lifetime is over.
        await waitFor(() => idp.codeExpired(code), 'the authorization code to expire', 5_000);
        return callback(back, state);
      }, /invalid_grant/);
    } finally {
      idp.authorizationCodeTtl = 60;
    }
  });

  it('refuses an ID token the identity provider signed for another client (audience)', async () => {
    await expectRefused(async () => {
      const { location, state } = await start();
      // Genuinely signed by the same provider, for the same person and this sign-in's nonce:
      // only its audience says it is not meant for this service.
      const nonce = new URL(location).searchParams.get('nonce')!;
      idp.nextIdToken = await idp.idTokenOfOtherClient('ada', nonce);
      const back = await signInAtIdp(location, 'ada');
      return callback(back, state);
    }, /"aud"/);
    expect(idp.nextIdToken, 'the token response was answered with the other client’s ID token').toBeUndefined();
  });

  it('refuses an ID token whose claims were changed after the identity provider signed it', async () => {
    await expectRefused(async () => {
      const { location, state } = await start();
      // The provider's own token for this sign-in (audience, nonce and expiry right), another
      // person's e-mail written into it on the way: only its signature tells.
      idp.nextIdTokenClaims = { email: 'mallory@acme.test', email_verified: true };
      return callback(await signInAtIdp(location, 'ada'), state);
    }, /signature/);
    expect(idp.nextIdTokenClaims, 'the token response carried the changed ID token').toBeUndefined();
    expect(await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'mallory@acme.test').executeTakeFirst()).toBeUndefined();
  });

  it('refuses an e-mail of a domain not allowed, and one the provider does not vouch for; neither becomes a user', async () => {
    const eve = await ssoFlow('eve');
    expect(eve.statusCode, eve.body).toBe(403);
    expect(eve.json().error.message).toContain('elsewhere.test');
    const una = await ssoFlow('unverified');
    expect(una.statusCode, una.body).toBe(403);
    expect(una.json().error.message).toContain('email_verified');
    const made = await ctx.deps.db
      .selectFrom('users')
      .select('email')
      .where('email', 'in', ['eve@elsewhere.test', 'una@acme.test'])
      .execute();
    expect(made).toEqual([]);
    const reasons = (await auditActions()).filter((e) => e.action === 'sign_in.sso_failed').map((e) => e.changes?.reason?.new);
    expect(reasons).toEqual(expect.arrayContaining(['domain elsewhere.test not allowed', 'e-mail not verified']));
  });

  it('refuses an e-mail claim that is not one mailbox, even ending in an allowed domain', async () => {
    idp.accounts.set('listed', { email: 'eve@evil.test, mal@acme.test', email_verified: true });
    idp.accounts.set('broken', { email: 'eve@evil.test\r\nbcc: mal@acme.test', email_verified: true });
    for (const account of ['listed', 'broken']) {
      const res = await ssoFlow(account);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.message).toContain('not one e-mail address');
    }
    const made = await ctx.deps.db.selectFrom('users').select('email').where('email', 'like', '%evil.test%').execute();
    expect(made).toEqual([]);
  });

  it('routes the waiting threads to a user it creates, who is online from the start', async () => {
    // Everyone else of the workspace is away: the thread waits for the newcomer.
    await ctx.deps.db.updateTable('users').set({ availability: 'busy' }).where('workspace_id', '=', workspaceId).execute();
    const connection = await makeConnection(ctx.deps, workspaceId);
    const routing = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${connection.id}`,
      headers: tenant.headers,
      payload: { autoAssign: true },
    });
    expect(routing.statusCode, routing.body).toBe(200);
    const waiting = await inbound(ctx, connection, 'sso-waiting', 'sso-waiting-1');
    const assigneeOf = async () =>
      (await ctx.deps.db.selectFrom('threads').select('assignee_id').where('id', '=', waiting).executeTakeFirstOrThrow()).assignee_id;
    expect(await assigneeOf()).toBeNull();
    idp.accounts.set('grace', { email: 'grace@acme.test', email_verified: true, name: 'Grace' });
    expect((await ssoFlow('grace')).statusCode).toBe(302);
    const grace = await ctx.deps.db.selectFrom('users').select('id').where('email', '=', 'grace@acme.test').executeTakeFirstOrThrow();
    expect(await assigneeOf()).toBe(grace.id);
  });

  it('refuses a deactivated user', async () => {
    const { user } = await makeUser(ctx.deps, workspaceId, { email: 'dora@acme.test' });
    await ctx.deps.db.updateTable('users').set({ active: false }).where('id', '=', user.id).execute();
    idp.accounts.set('dora', { email: 'dora@acme.test', email_verified: true });
    const res = await ssoFlow('dora');
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.message).toContain('deactivated');
  });

  it('refuses a user of another workspace', async () => {
    const other = await makeTenant(ctx.deps);
    await makeUser(ctx.deps, other.workspace.id, { email: 'otto@acme.test' });
    idp.accounts.set('otto', { email: 'otto@acme.test', email_verified: true });
    const res = await ssoFlow('otto');
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.message).toContain('another workspace');
  });

  it('refuses a platform operator: the workspace admin’s identity provider must not vouch for one', async () => {
    // The admin chooses the issuer and the allowed domains, so the provider can claim any
    // address; signing an operator in that way would give a workspace admin every tenant.
    const { user } = await makeUser(ctx.deps, workspaceId, { email: 'opal@acme.test', roles: ['operator'] });
    idp.accounts.set('opal', { email: 'opal@acme.test', email_verified: true });
    const before = await sql<{ n: number }>`SELECT count(*)::int AS n FROM auth_codes WHERE user_id = ${user.id}`.execute(ctx.deps.db);
    const res = await ssoFlow('opal');
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.message).toContain('platform operator');
    const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM auth_codes WHERE user_id = ${user.id}`.execute(ctx.deps.db);
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    const failed = (await auditActions()).filter((e) => e.action === 'sign_in.sso_failed');
    expect(failed.at(-1)?.changes?.reason?.new).toBe('platform operator');
  });
});

describe('enforce', () => {
  const login = (email: string, password: string, otp?: string) =>
    ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password, ...(otp ? { otp } : {}) } });

  it('refuses password sign-in (401 sso_required) but to admins with two-factor sign-in; a wrong password says nothing', async () => {
    const agent = await makeUser(ctx.deps, workspaceId, { email: 'agnes@acme.test', roles: ['agent'] });
    const admin = await makeUser(ctx.deps, workspaceId, { email: 'adam@acme.test', roles: ['admin'] });
    const bare = await makeUser(ctx.deps, workspaceId, { email: 'bart@acme.test', roles: ['admin'] });
    // Two-factor sign-in for the admin, before enforcing.
    const token = (await login(admin.user.email, admin.password)).json().access_token as string;
    const auth = { authorization: `Bearer ${token}` };
    const setup = await ctx.app.inject({ method: 'POST', url: '/v1/users/me/2fa/setup', headers: auth });
    const secret = setup.json().data.secret as string;
    const now = Math.floor(Date.now() / 1000);
    const enabled = await ctx.app.inject({
      method: 'POST',
      url: '/v1/users/me/2fa/enable',
      headers: auth,
      payload: { code: totpCode(secret, now) },
    });
    expect(enabled.statusCode, enabled.body).toBe(200);

    expect((await patchWorkspace({ sso: { ...ssoSetting(), enforce: true } })).statusCode).toBe(200);
    const refused = await login(agent.user.email, agent.password);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe('sso_required');
    expect(refused.json().error.message).toContain(`/auth/sso/${workspaceId}/start`);
    expect((await login(bare.user.email, bare.password)).json().error.code).toBe('sso_required');
    const wrong = await login(agent.user.email, 'not-the-password');
    expect(wrong.json().error.code).toBe('unauthorized');
    // The admin with two-factor sign-in keeps the password: it asks for the code, then signs in.
    expect((await login(admin.user.email, admin.password)).json().error.code).toBe('otp_required');
    const withCode = await login(admin.user.email, admin.password, totpCode(secret, now + 30));
    expect(withCode.statusCode, withCode.body).toBe(200);
    // Single sign-on itself goes on.
    expect((await ssoFlow('ada')).statusCode).toBe(302);

    expect((await patchWorkspace({ sso: { ...ssoSetting(), enforce: false } })).statusCode).toBe(200);
    expect((await login(agent.user.email, agent.password)).statusCode).toBe(200);
    const failed = (await auditActions()).filter((e) => e.action === 'sign_in.failed' && e.target_id === String(agent.user.id));
    expect(failed.map((e) => e.changes?.reason?.new)).toContain('sso_required');
  });

  it('leaves a platform operator their password: a workspace setting never locks them out', async () => {
    const op = await makeUser(ctx.deps, workspaceId, { email: 'otis@acme.test', roles: ['operator'] });
    expect((await patchWorkspace({ sso: { ...ssoSetting(), enforce: true } })).statusCode).toBe(200);
    try {
      const res = await login(op.user.email, op.password);
      expect(res.statusCode, res.body).toBe(200);
    } finally {
      expect((await patchWorkspace({ sso: { ...ssoSetting(), enforce: false } })).statusCode).toBe(200);
    }
  });
});

describe('a name from the identity provider', () => {
  it('is kept to 200 characters without splitting an emoji in two', async () => {
    // The emoji's two UTF-16 halves sit at units 199 and 200: a cut at 200 units would keep one half.
    idp.accounts.set('long-name', { email: 'long-name@acme.test', email_verified: true, name: `${'n'.repeat(199)}😀 and more` });
    const res = await ssoFlow('long-name');
    expect(res.statusCode, res.body).toBe(302);
    const user = await me(await exchange(String(res.headers.location)));
    expect(user.name).toBe(`${'n'.repeat(199)}😀`);
  });
});
