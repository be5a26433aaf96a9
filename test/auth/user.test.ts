import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { JWT_SECRET, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const { user: ada, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'ada@acme.test', roles: ['admin'] });

const login = (body: object, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: body, headers });
const me = (token: string) => ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: `Bearer ${token}` } });
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

async function token(remember = false) {
  const res = await login({ email: 'ada@acme.test', password, remember });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { access_token: string; token_expiry: number; auth_code: string; data: object };
}

describe('POST /api/user/login', () => {
  it('answers the login response: UserResource, access_token, token_expiry, auth_code', async () => {
    const before = Math.floor(Date.now() / 1000);
    const body = await token();
    expect(body).toEqual({
      data: { id: ada.id, name: 'Test User', email: 'ada@acme.test', workspaces_id: tenant.workspace.id, roles: ['admin'] },
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_expiry: expect.any(Number),
      auth_code: expect.any(String),
      meta: { requestId: expect.any(String) },
    });
    expect(body.token_expiry - before).toBeGreaterThanOrEqual(12 * 3600 - 5);
    expect(body.token_expiry - before).toBeLessThanOrEqual(12 * 3600 + 5);
    const remembered = await token(true);
    expect(remembered.token_expiry - before).toBeGreaterThanOrEqual(30 * 24 * 3600 - 5);
    expect((await me(body.access_token)).json().data.id).toBe(ada.id);
  });

  it('gives the same answer for a wrong password and an unknown e-mail', async () => {
    const wrong = await login({ email: 'ada@acme.test', password: 'not the password' }, { 'x-forwarded-for': '10.0.0.9' });
    const unknown = await login({ email: 'nobody@acme.test', password: 'not the password' });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json().error).toEqual(unknown.json().error);
    expect(wrong.json().error).toEqual({ code: 'unauthorized', message: 'invalid e-mail or password' });
  });

  it('refuses bad bodies with 422 and non-JSON with 400', async () => {
    expect((await login({ email: 'ada@acme.test' })).statusCode).toBe(422);
    expect((await login({ email: 'ada@acme.test', password: 1 })).statusCode).toBe(422);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/api/user/login',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('bearer tokens', () => {
  it('refuses missing, malformed, tampered, alg-none and expired tokens with 401', async () => {
    const good = (await token()).access_token;
    const [h, p] = good.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${b64({ ...claims, sub: '999' })}.${good.split('.')[2]}`;
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`;
    const otherKey = (() => {
      const head = b64({ alg: 'HS256', typ: 'JWT' });
      const body = b64(claims);
      return `${head}.${body}.${createHmac('sha256', 'another-secret').update(`${head}.${body}`).digest('base64url')}`;
    })();
    const expired = ctx.app.jwt.sign({ ...claims, iat: claims.iat - 100_000, exp: Math.floor(Date.now() / 1000) - 60 });
    for (const t of ['garbage', 'a.b.c', forged, none, otherKey, expired]) {
      const res = await me(t);
      expect(res.statusCode, t).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: 'Basic abc' } })).statusCode).toBe(401);
    expect(JWT_SECRET).not.toBe('another-secret');
  });

  it('lets a JWT admin use admin routes; a user without the role is forbidden', async () => {
    const admin = (await token()).access_token;
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: `Bearer ${admin}` } })).statusCode).toBe(
      200,
    );
    const { password: pw } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'agent@acme.test', roles: ['agent'] });
    const agent = (await login({ email: 'agent@acme.test', password: pw })).json().access_token;
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/api-keys', headers: { authorization: `Bearer ${agent}` } })).statusCode).toBe(
      403,
    );
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: { authorization: `Bearer ${agent}` } })).statusCode).toBe(
      200,
    );
  });
});

describe('refresh and logout', () => {
  it('refresh answers a new login response and the replaced token stops working', async () => {
    const old = (await token()).access_token;
    const res = await ctx.app.inject({ method: 'POST', url: '/api/user/refresh', headers: { authorization: `Bearer ${old}` } });
    expect(res.statusCode).toBe(200);
    const fresh = res.json();
    expect(fresh).toMatchObject({
      data: { id: ada.id },
      access_token: expect.any(String),
      token_expiry: expect.any(Number),
      auth_code: expect.any(String),
    });
    expect((await me(old)).statusCode).toBe(401);
    expect((await me(fresh.access_token)).statusCode).toBe(200);
  });

  it('two concurrent refreshes of one token: one 200, one 401, and one new live session', async () => {
    // A few rounds, each on a user of its own, so the two requests really overlap at least once.
    for (let round = 0; round < 4; round++) {
      const { user, password: pw } = await makeUser(ctx.deps, tenant.workspace.id);
      const t = (await login({ email: user.email, password: pw })).json().access_token as string;
      const refresh = () => ctx.app.inject({ method: 'POST', url: '/api/user/refresh', headers: { authorization: `Bearer ${t}` } });
      const statuses = (await Promise.all([refresh(), refresh()])).map((r) => r.statusCode).sort();
      expect(statuses, `round ${round}`).toEqual([200, 401]);
      const { rows } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM sessions WHERE user_id = ${user.id} AND revoked_at IS NULL`.execute(ctx.deps.db);
      expect(rows[0]!.n, `round ${round}`).toBe(1);
    }
  });

  it('logout ends the session: 204, then the token is refused', async () => {
    const t = (await token()).access_token;
    const other = (await token()).access_token;
    const res = await ctx.app.inject({ method: 'POST', url: '/api/user/logout', headers: { authorization: `Bearer ${t}` } });
    expect(res.statusCode).toBe(204);
    expect((await me(t)).statusCode).toBe(401);
    expect((await me(other)).statusCode).toBe(200); // other sessions live on
  });
});

describe('auth codes', () => {
  it('exchanges a code for a session once; a reused, unknown or expired code is refused', async () => {
    const { auth_code } = await token();
    const exchange = (code: string) => ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: code } });
    const first = await exchange(auth_code);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ data: { id: ada.id }, access_token: expect.any(String) });
    expect((await me(first.json().access_token)).statusCode).toBe(200);
    expect((await exchange(auth_code)).statusCode).toBe(401);
    expect((await exchange('made-up')).statusCode).toBe(401);

    const t = (await token()).access_token;
    const generated = await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code', headers: { authorization: `Bearer ${t}` } });
    expect(generated.json().data).toEqual({ auth_code: expect.any(String), expires_in: 60 });
    await sql`UPDATE auth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`.execute(ctx.deps.db);
    expect((await exchange(generated.json().data.auth_code)).statusCode).toBe(401);
  });

  it('generate-code needs a signed-in user; generate-token works anonymously', async () => {
    expect((await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code' })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code', headers: tenant.headers })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: {} })).statusCode).toBe(422);
  });

  it('a personal-access token cannot mint a session: generate-code and generate-token refuse it with 403', async () => {
    const t = (await token()).access_token;
    const pat = (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/personal-access-tokens',
        headers: { authorization: `Bearer ${t}` },
        payload: { name: 'script' },
      })
    ).json().data.token as string;
    const viaPat = await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code', headers: { authorization: `Bearer ${pat}` } });
    expect(viaPat.statusCode).toBe(403);
    expect(viaPat.json().error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('personal-access token') });
    // a JWT session still works, and its code cannot be spent by a PAT holder either
    const code = (
      await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code', headers: { authorization: `Bearer ${t}` } })
    ).json().data.auth_code as string;
    const exchange = (headers: Record<string, string>) =>
      ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', headers, payload: { auth_code: code } });
    expect((await exchange({ authorization: `Bearer ${pat}` })).statusCode).toBe(403);
    expect((await exchange({})).statusCode).toBe(200); // the code was not spent by the refused call
  });
});

describe('auth codes die with the session they were minted in', () => {
  const exchange = (code: string) => ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: code } });
  const generate = async (t: string) => {
    const res = await ctx.app.inject({ method: 'POST', url: '/api/user/generate-code', headers: { authorization: `Bearer ${t}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.auth_code as string;
  };
  const post = (url: string, t: string) => ctx.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t}` } });
  const spentAnswer = { code: 'unauthorized', message: 'invalid, used or expired auth code' };

  it('logout spends the login answer’s code and generate-code’s; another session’s codes stay good', async () => {
    const ended = await token();
    const endedCode = await generate(ended.access_token);
    const kept = await token();
    const keptCode = await generate(kept.access_token);
    expect((await post('/api/user/logout', ended.access_token)).statusCode).toBe(204);
    for (const code of [ended.auth_code, endedCode]) {
      const res = await exchange(code);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toEqual(spentAnswer);
    }
    for (const code of [kept.auth_code, keptCode]) expect((await exchange(code)).statusCode).toBe(200);
  });

  it('a refresh ends the old session’s codes; the new session’s code and a traded code’s session work', async () => {
    const old = await token();
    const oldCode = await generate(old.access_token);
    const res = await post('/api/user/refresh', old.access_token);
    expect(res.statusCode).toBe(200);
    expect((await exchange(old.auth_code)).statusCode).toBe(401);
    expect((await exchange(oldCode)).statusCode).toBe(401);
    const traded = await exchange(res.json().auth_code);
    expect(traded.statusCode).toBe(200);
    // The traded code started a session of its own, whose code dies with it in turn.
    const tradedCode = traded.json().auth_code as string;
    expect((await post('/api/user/logout', traded.json().access_token)).statusCode).toBe(204);
    expect((await exchange(tradedCode)).statusCode).toBe(401);
  });

  it('an expired session’s code is refused even within its 60 s', async () => {
    const { access_token, auth_code } = await token();
    const jti = JSON.parse(Buffer.from(access_token.split('.')[1]!, 'base64url').toString()).jti as string;
    await sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ${jti}`.execute(ctx.deps.db);
    expect((await exchange(auth_code)).statusCode).toBe(401);
  });
});

describe('login rate limit', () => {
  it('after 5 failures for an e-mail in 15 minutes answers 429 with retry-after, even for the right password', async () => {
    const { password: pw } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'limited@acme.test' });
    for (let i = 0; i < 5; i++) expect((await login({ email: 'limited@acme.test', password: 'wrong' })).statusCode).toBe(401);
    const blocked = await login({ email: 'limited@acme.test', password: pw });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().error.code).toBe('rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(800);
    await sql`UPDATE login_attempts SET created_at = created_at - interval '16 minutes' WHERE email = 'limited@acme.test'`.execute(
      ctx.deps.db,
    );
    expect((await login({ email: 'limited@acme.test', password: pw })).statusCode).toBe(200);
  });

  it('lets no more than 5 guesses of a parallel burst reach the password check', async () => {
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'burst@acme.test' });
    const results = await Promise.all(Array.from({ length: 20 }, () => login({ email: 'burst@acme.test', password: 'guess' })));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401).length).toBeLessThanOrEqual(5);
    expect(codes.filter((c) => c === 429).length).toBeGreaterThanOrEqual(15);
  });

  it('does not count successful logins', async () => {
    const { password: pw } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'often@acme.test' });
    for (let i = 0; i < 7; i++) expect((await login({ email: 'often@acme.test', password: pw })).statusCode).toBe(200);
  });

  it('after 50 failures from one client address answers 429 for any e-mail', async () => {
    await sql`INSERT INTO login_attempts (email, ip) SELECT 'spray' || g || '@x.test', '127.0.0.1' FROM generate_series(1, 50) g`.execute(
      ctx.deps.db,
    );
    const res = await login({ email: 'someone-new@acme.test', password: 'whatever' });
    expect(res.statusCode).toBe(429);
    await sql`DELETE FROM login_attempts WHERE ip = '127.0.0.1'`.execute(ctx.deps.db);
  });

  // 50 real failed sign-ins, each paying the password hash: minutes on a loaded machine.
  it('counts an IPv6 client per /64: 50 failures spread over its addresses block the whole /64, not the next one', {
    timeout: 180_000,
  }, async () => {
    const from = (remoteAddress: string, email: string) =>
      ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password: 'wrong' }, remoteAddress });
    for (let i = 0; i < 50; i++) expect((await from(`2001:db8:1:2:${i.toString(16)}::${i + 1}`, `v6-${i}@x.test`)).statusCode).toBe(401);
    const blocked = await from('2001:db8:1:2:ffff:ffff:ffff:fffe', 'v6-new@x.test');
    expect(blocked.statusCode).toBe(429);
    expect((await from('2001:db8:1:3::1', 'v6-other@x.test')).statusCode).toBe(401);
    await sql`DELETE FROM login_attempts WHERE ip LIKE '2001:db8:%'`.execute(ctx.deps.db);
  });
});
