import { describe, expect, it } from 'vitest';
import { totpCode } from '../../src/auth/totp.js';
import { TOTP_SECRET_DOES_NOT_OPEN } from '../../src/auth/two-factor.service.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// A clock the tests move by whole TOTP steps, so each login can have a fresh code.
let clock = Date.now();
const ctx = await useTestContext({ now: () => new Date(clock) });
const tenant = await makeTenant(ctx.deps);
const epoch = () => Math.floor(clock / 1000);
const nextStep = () => {
  clock += 30_000;
};

const login = (body: object) => ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { remember: false, ...body } });
const call = (method: 'GET' | 'POST' | 'PATCH', url: string, token: string, payload?: object) =>
  ctx.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

async function signIn(email: string, password: string, otp?: string): Promise<string> {
  const res = await login({ email, password, ...(otp ? { otp } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().access_token as string;
}

/** Sets up and enables two-factor sign-in for a signed-in user; answers the secret and the recovery codes. */
async function enable(token: string) {
  const setup = await call('POST', '/v1/users/me/2fa/setup', token);
  expect(setup.statusCode, setup.body).toBe(200);
  const { secret, otpauthUrl } = setup.json().data as { secret: string; otpauthUrl: string };
  const res = await call('POST', '/v1/users/me/2fa/enable', token, { code: totpCode(secret, epoch()) });
  expect(res.statusCode, res.body).toBe(200);
  nextStep(); // the enabling code is spent: the next login needs the next one
  return { secret, otpauthUrl, recoveryCodes: res.json().data.recoveryCodes as string[] };
}

describe('TOTP (RFC 6238)', () => {
  // RFC 6238 appendix B, SHA-1: the seed "12345678901234567890" (base32 below), 8 digits.
  const seed = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  it('gives the RFC test vectors, and their last 6 digits as the 6-digit code apps show', () => {
    for (const [time, code] of vectors) {
      expect(totpCode(seed, time, 8)).toBe(code);
      expect(totpCode(seed, time)).toBe(code.slice(2));
    }
  });
});

describe('setting up two-factor sign-in', () => {
  it('answers a secret and its otpauth address; a wrong code enables nothing; a right one answers 10 recovery codes', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'grace@acme.test' });
    const token = await signIn(user.email, password);
    expect((await call('GET', '/v1/users/me/2fa', token)).json().data).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    const setup = (await call('POST', '/v1/users/me/2fa/setup', token)).json().data as { secret: string; otpauthUrl: string };
    expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.otpauthUrl).toBe(`otpauth://totp/inbox:grace%40acme.test?secret=${setup.secret}&issuer=inbox`);
    const wrongCode = totpCode(setup.secret, epoch() - 300);
    const wrong = await call('POST', '/v1/users/me/2fa/enable', token, { code: wrongCode });
    expect(wrong.statusCode).toBe(422);
    // Not on: the password alone still signs in.
    await signIn(user.email, password);
    const res = await call('POST', '/v1/users/me/2fa/enable', token, { code: totpCode(setup.secret, epoch()) });
    expect(res.statusCode, res.body).toBe(200);
    const codes = res.json().data.recoveryCodes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}$/);
    expect((await call('GET', '/v1/users/me/2fa', token)).json().data).toEqual({ enabled: true, recoveryCodesLeft: 10 });
    // Setting up again while on is refused: the authenticator in use stays the one.
    expect((await call('POST', '/v1/users/me/2fa/setup', token)).statusCode).toBe(409);
    // Neither the secret nor any recovery code is stored as such.
    const row = await ctx.deps.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.totp_secret!.toString('latin1')).not.toContain(setup.secret);
    const stored = await ctx.deps.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    expect(stored).toHaveLength(10);
    const all = JSON.stringify(stored);
    for (const c of codes) {
      expect(all).not.toContain(c);
      expect(all).not.toContain(c.replace(/-/g, ''));
    }
    nextStep();
  });
});

describe('signing in with two-factor sign-in on', () => {
  it('asks for otp (401 otp_required), then answers the usual login response; a code works once', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const { secret } = await enable(await signIn(user.email, password));
    const bare = await login({ email: user.email, password });
    expect(bare.statusCode).toBe(401);
    expect(bare.json().error.code).toBe('otp_required');
    // A wrong password says nothing about two-factor sign-in.
    const wrongPassword = await login({ email: user.email, password: 'not it', otp: totpCode(secret, epoch()) });
    expect(wrongPassword.json().error).toEqual({ code: 'unauthorized', message: 'invalid e-mail or password' });
    const code = totpCode(secret, epoch());
    const res = await login({ email: user.email, password, otp: code });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json()).sort()).toEqual(['access_token', 'auth_code', 'data', 'meta', 'token_expiry']);
    expect(res.json().data.id).toBe(user.id);
    // The same code again (a replay, within its 30 s): refused.
    const replay = await login({ email: user.email, password, otp: code });
    expect(replay.statusCode).toBe(401);
    expect(replay.json().error.code).toBe('unauthorized');
    nextStep();
    await signIn(user.email, password, totpCode(secret, epoch()));
  });

  it('takes a code typed as the app shows it, in two groups ("123 456"), to turn it on and to sign in', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const token = await signIn(user.email, password);
    const { secret } = (await call('POST', '/v1/users/me/2fa/setup', token)).json().data as { secret: string };
    const grouped = (code: string) => `${code.slice(0, 3)} ${code.slice(3)}`;
    const on = await call('POST', '/v1/users/me/2fa/enable', token, { code: grouped(totpCode(secret, epoch())) });
    expect(on.statusCode, on.body).toBe(200);
    nextStep();
    const code = totpCode(secret, epoch());
    const res = await login({ email: user.email, password, otp: ` ${grouped(code)} ` });
    expect(res.statusCode, res.body).toBe(200);
    // Still a code that works once, in whatever spacing.
    expect((await login({ email: user.email, password, otp: code })).statusCode).toBe(401);
    expect((await login({ email: user.email, password, otp: '12 34 5' })).statusCode).toBe(401);
  });

  it('takes each recovery code once, in any case and spacing', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const token = await signIn(user.email, password);
    const { recoveryCodes } = await enable(token);
    const code = recoveryCodes[3]!;
    await signIn(user.email, password, ` ${code.toUpperCase().replace(/-/g, ' ')} `);
    expect((await login({ email: user.email, password, otp: code })).statusCode).toBe(401);
    expect((await call('GET', '/v1/users/me/2fa', token)).json().data.recoveryCodesLeft).toBe(9);
    await signIn(user.email, password, recoveryCodes[4]);
  });

  it('answers a clear 401 for a code when the sealed secret does not open; recovery codes still sign in', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const token = await signIn(user.email, password);
    const { secret, recoveryCodes } = await enable(token);
    // The sealed value is one that does not open: another key's, or altered.
    await ctx.deps.db
      .updateTable('users')
      .set({ totp_secret: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
      .where('id', '=', user.id)
      .execute();
    const refused = await login({ email: user.email, password, otp: totpCode(secret, epoch()) });
    expect(refused.statusCode, refused.body).toBe(401);
    expect(refused.json().error).toEqual({ code: 'unauthorized', message: TOTP_SECRET_DOES_NOT_OPEN });
    await signIn(user.email, password, recoveryCodes[0]);
  });

  it('refuses the 6th wrong code in 15 minutes with 429, even with the right code then', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const { secret } = await enable(await signIn(user.email, password));
    for (let i = 0; i < 5; i++) {
      const res = await login({ email: user.email, password, otp: i % 2 ? '000000' : 'not-a-recovery-code' });
      expect(res.statusCode).toBe(401);
    }
    const sixth = await login({ email: user.email, password, otp: totpCode(secret, epoch()) });
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json().error.code).toBe('rate_limited');
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
    clock += 15 * 60_000 + 1000;
    await signIn(user.email, password, totpCode(secret, epoch()));
  });

  it('does not count right codes against the limit', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const { secret } = await enable(await signIn(user.email, password));
    for (let i = 0; i < 7; i++) {
      await signIn(user.email, password, totpCode(secret, epoch()));
      nextStep();
    }
  });

  it('turns off with the password only; the password alone then signs in', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const token = await signIn(user.email, password);
    const { secret } = await enable(token);
    expect((await call('POST', '/v1/users/me/2fa/disable', token, { password: 'wrong password' })).statusCode).toBe(403);
    expect((await login({ email: user.email, password })).json().error.code).toBe('otp_required');
    const off = await call('POST', '/v1/users/me/2fa/disable', token, { password });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    await signIn(user.email, password);
    expect(await ctx.deps.db.selectFrom('recovery_codes').where('user_id', '=', user.id).selectAll().execute()).toEqual([]);
    expect(secret).toBeTruthy();
  });
});

describe('POST /v1/users/:id/2fa/reset', () => {
  it("lets an admin turn a user's two-factor sign-in off; not an agent, nor for another workspace's user", async () => {
    const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
    const agent = await makeUser(ctx.deps, tenant.workspace.id);
    const adminToken = await signIn(admin.user.email, admin.password);
    const agentToken = await signIn(agent.user.email, agent.password);
    await enable(agentToken);
    expect((await call('POST', `/v1/users/${admin.user.id}/2fa/reset`, agentToken)).statusCode).toBe(403);
    const other = await makeTenant(ctx.deps);
    const stranger = await makeUser(ctx.deps, other.workspace.id);
    expect((await call('POST', `/v1/users/${stranger.user.id}/2fa/reset`, adminToken)).statusCode).toBe(404);
    expect((await login({ email: agent.user.email, password: agent.password })).json().error.code).toBe('otp_required');
    const reset = await call('POST', `/v1/users/${agent.user.id}/2fa/reset`, adminToken);
    expect(reset.statusCode, reset.body).toBe(200);
    expect(reset.json().data).toEqual({ enabled: false, recoveryCodesLeft: 0 });
    await signIn(agent.user.email, agent.password);
  });

  it("is not an admin's way around the password for their own: 422, and it stays on", async () => {
    const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
    const token = await signIn(admin.user.email, admin.password);
    await enable(token);
    const own = await call('POST', `/v1/users/${admin.user.id}/2fa/reset`, token);
    expect(own.statusCode, own.body).toBe(422);
    expect(own.json().error.message).toContain('/v1/users/me/2fa/disable');
    expect((await call('GET', '/v1/users/me/2fa', token)).json().data.enabled).toBe(true);
    expect((await login({ email: admin.user.email, password: admin.password })).json().error.code).toBe('otp_required');
    // Another admin (or an admin key) still can.
    const reset = await ctx.app.inject({ method: 'POST', url: `/v1/users/${admin.user.id}/2fa/reset`, headers: tenant.headers });
    expect(reset.statusCode, reset.body).toBe(200);
  });

  it('gives a user whose phone was lost, and who was locked out by wrong codes, a fresh start at setting it up again', async () => {
    const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
    const adminToken = await signIn(admin.user.email, admin.password);
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    await enable(await signIn(user.email, password));
    for (let i = 0; i < 5; i++) expect((await login({ email: user.email, password, otp: '000000' })).statusCode).toBe(401);
    expect((await login({ email: user.email, password, otp: '000000' })).statusCode).toBe(429);

    expect((await call('POST', `/v1/users/${user.id}/2fa/reset`, adminToken)).statusCode).toBe(200);
    const token = await signIn(user.email, password);
    const { recoveryCodes } = await enable(token);
    expect(recoveryCodes).toHaveLength(10);
  });
});

describe('workspace require2fa', () => {
  it('is a workspace setting, false by default, that admins change', async () => {
    const t = await makeTenant(ctx.deps);
    const get = await ctx.app.inject({ method: 'GET', url: '/v1/workspace', headers: t.headers });
    expect(get.json().data.require2fa).toBe(false);
    const patch = await ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: t.headers, payload: { require2fa: true } });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json().data.require2fa).toBe(true);
  });

  it('lets a user without it sign in and set it up, and answers 403 2fa_required on every other route', async () => {
    const t = await makeTenant(ctx.deps);
    await ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: t.headers, payload: { require2fa: true } });
    const { user, password } = await makeUser(ctx.deps, t.workspace.id, { roles: ['admin'] });
    const token = await signIn(user.email, password);
    expect((await call('GET', '/api/user/user', token)).statusCode).toBe(200);
    const threads = await call('GET', '/v1/threads', token);
    expect(threads.statusCode).toBe(403);
    expect(threads.json().error.code).toBe('2fa_required');
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/realtime?token=${token}` })).json().error.code).toBe('2fa_required');

    // Every route of the OpenAPI document that wants a credential (401 without one) refuses
    // this user's bearer with 2fa_required, but for the few that lead to turning it on.
    const allowed = new Set([
      'GET /api/user/user',
      'POST /api/user/logout',
      'GET /v1/users/me/2fa',
      'POST /v1/users/me/2fa/setup',
      'POST /v1/users/me/2fa/enable',
    ]);
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, object> };
    const wrong: string[] = [];
    let guarded = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      // Provider webhooks and the accounts webhook answer to signatures, the engage routes to the
      // admin key, not to people.
      if (path.startsWith('/webhooks/') || path === '/v1/accounts/webhook' || path.startsWith('/v1/engage/')) continue;
      for (const method of Object.keys(ops).map((m) => m.toUpperCase())) {
        if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method) || allowed.has(`${method} ${path}`)) continue;
        const url = path.replace(/\{\w+\}/g, '1');
        const m = method as 'GET';
        const anonymous = await ctx.app.inject({ method: m, url });
        if (anonymous.statusCode !== 401) continue;
        guarded++;
        const res = await ctx.app.inject({ method: m, url, headers: { authorization: `Bearer ${token}` } });
        if (res.statusCode !== 403 || res.json().error.code !== '2fa_required') wrong.push(`${method} ${path} → ${res.statusCode}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(guarded).toBeGreaterThan(40);

    // Refresh is one of them, by bearer (checked above) and by the console's cookie alike.
    const signedIn = await login({ email: user.email, password });
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const byCookie = await ctx.app.inject({ method: 'POST', url: '/api/user/refresh', headers: { cookie } });
    expect(byCookie.statusCode, byCookie.body).toBe(403);
    expect(byCookie.json().error.code).toBe('2fa_required');

    await enable(token);
    expect((await call('GET', '/v1/threads', token)).statusCode).toBe(200);
  });

  it('holds for personal-access tokens too', async () => {
    const t = await makeTenant(ctx.deps);
    const { user, password } = await makeUser(ctx.deps, t.workspace.id);
    const token = await signIn(user.email, password);
    const pat = await call('POST', '/v1/personal-access-tokens', token, { name: 'laptop' });
    expect(pat.statusCode, pat.body).toBe(201);
    await ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: t.headers, payload: { require2fa: true } });
    const patToken = pat.json().data.token as string;
    expect((await call('GET', '/api/user/user', patToken)).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/realtime?token=${patToken}` })).json().error.code).toBe('2fa_required');
  });
});
