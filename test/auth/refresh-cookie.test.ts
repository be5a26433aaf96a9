import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { REFRESH_COOKIE, REFRESH_PATH } from '../../src/auth/refresh-cookie.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

/*
 * The console's refresh cookie (docs/auth.md): set at login, `HttpOnly`, `SameSite=Strict`,
 * `Secure` on an https INBOX_PUBLIC_URL, scoped to the refresh route; the only credential it
 * is is "a new token of this session" on POST /api/user/refresh. The contract's bearer
 * refresh is what it always was.
 */
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ env: { INBOX_PUBLIC_URL: 'https://inbox.example.test' }, logLines });
const tenant = await makeTenant(ctx.deps);

type Inject = Awaited<ReturnType<typeof ctx.app.inject>>;

async function signIn(remember: boolean) {
  const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
  const res = await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password, remember } });
  expect(res.statusCode, res.body).toBe(200);
  return { user, res, token: res.json().access_token as string, cookie: cookieOf(res) };
}

function setCookieOf(res: Inject): string {
  const header = res.headers['set-cookie'];
  expect(header, 'a set-cookie header').toBeDefined();
  const all = Array.isArray(header) ? header : [header!];
  expect(all).toHaveLength(1);
  return all[0]!;
}

function cookieOf(res: Inject): string {
  const value = /^inbox_refresh=([^;]*)/.exec(setCookieOf(res))?.[1];
  expect(value).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  return value!;
}

const attributes = (setCookie: string) => setCookie.split('; ').slice(1).sort();

const refreshWithCookie = (cookie: string, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: REFRESH_PATH, headers: { cookie: `theme=dark; ${REFRESH_COOKIE}=${cookie}`, ...headers } });
const refreshWithBearer = (token: string, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: REFRESH_PATH, headers: { authorization: `Bearer ${token}`, ...headers } });
const me = (headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url: '/api/user/user', headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const liveSessions = async (userId: number) =>
  (await sql<{ n: number }>`SELECT count(*)::int AS n FROM sessions WHERE user_id = ${userId} AND revoked_at IS NULL`.execute(ctx.deps.db))
    .rows[0]!.n;

describe('the refresh cookie set at login', () => {
  it('is HttpOnly, SameSite=Strict, Secure on https, scoped to the refresh route, and kept 30 days with remember', async () => {
    const { res } = await signIn(true);
    const maxAge = /Max-Age=(\d+)/.exec(setCookieOf(res))?.[1];
    expect(Number(maxAge)).toBeGreaterThan(30 * 86_400 - 10);
    expect(Number(maxAge)).toBeLessThanOrEqual(30 * 86_400);
    expect(attributes(setCookieOf(res))).toEqual(['HttpOnly', `Max-Age=${maxAge}`, `Path=${REFRESH_PATH}`, 'SameSite=Strict', 'Secure']);
  });

  it('without remember lasts until the browser closes (no Max-Age, no Expires)', async () => {
    const { res } = await signIn(false);
    expect(attributes(setCookieOf(res))).toEqual(['HttpOnly', `Path=${REFRESH_PATH}`, 'SameSite=Strict', 'Secure']);
  });
});

describe('POST /api/user/refresh with the cookie', () => {
  it('answers the login response with a new token of the same session; earlier tokens of it keep working', async () => {
    const { user, token, cookie } = await signIn(true);
    const res = await refreshWithCookie(cookie);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      data: expect.objectContaining({ id: user.id }),
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_expiry: expect.any(Number),
      auth_code: expect.any(String),
      meta: { requestId: expect.any(String) },
    });
    // Nothing to set again: the cookie still names the live session.
    expect(res.headers['set-cookie']).toBeUndefined();
    const fresh = res.json().access_token as string;
    expect((await me(bearer(fresh))).json().data.id).toBe(user.id);
    // Another tab's token of the session lives on: one tab's reload does not sign out the others.
    expect((await me(bearer(token))).statusCode).toBe(200);
    expect(await liveSessions(user.id)).toBe(1);
    // The same expiry: the cookie never stretches a session.
    const login = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(res.json().token_expiry).toBe(login.exp);
  });

  it('is refused from another site (Sec-Fetch-Site) and answers only POST', async () => {
    const { cookie } = await signIn(true);
    for (const site of ['cross-site', 'same-site', 'none']) {
      const res = await refreshWithCookie(cookie, { 'sec-fetch-site': site });
      expect(res.statusCode, site).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    const own = await refreshWithCookie(cookie, { 'sec-fetch-site': 'same-origin' });
    expect(own.statusCode).toBe(200);
    // No other origin may read an answer: no CORS, whoever asks.
    const elsewhere = await refreshWithCookie(cookie, { origin: 'https://evil.example' });
    expect(elsewhere.statusCode).toBe(200);
    expect(Object.keys(elsewhere.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const get = await ctx.app.inject({ method: 'GET', url: REFRESH_PATH, headers: { cookie: `${REFRESH_COOKIE}=${cookie}` } });
    expect(get.statusCode).toBe(404);
  });

  it('authenticates nothing else: other routes ignore the cookie, and its token is no bearer', async () => {
    const { cookie } = await signIn(true);
    const header = { cookie: `${REFRESH_COOKIE}=${cookie}` };
    for (const [method, url] of [
      ['GET', '/api/user/user'],
      ['GET', '/v1/threads'],
      ['POST', '/api/user/logout'],
      ['POST', '/api/user/generate-code'],
      ['GET', '/v1/api-keys'],
    ] as const) {
      expect((await ctx.app.inject({ method, url, headers: header })).statusCode, `${method} ${url} with the cookie`).toBe(401);
      expect((await ctx.app.inject({ method, url, headers: bearer(cookie) })).statusCode, `${method} ${url} with it as bearer`).toBe(401);
    }
    // Nor does it unlock the refresh route as a bearer (the bearer way ends sessions).
    expect((await refreshWithBearer(cookie)).statusCode).toBe(401);
    // An access token put in the cookie is not a refresh token.
    const { token } = await signIn(true);
    expect((await refreshWithCookie(token)).statusCode).toBe(401);
  });

  it('is refused once the session has ended, and the answer clears the cookie', async () => {
    const { user, cookie } = await signIn(true);
    await sql`UPDATE sessions SET revoked_at = now() WHERE user_id = ${user.id}`.execute(ctx.deps.db);
    const res = await refreshWithCookie(cookie);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect(attributes(setCookieOf(res))).toEqual(['HttpOnly', 'Max-Age=0', `Path=${REFRESH_PATH}`, 'SameSite=Strict', 'Secure']);
    expect(setCookieOf(res)).toMatch(/^inbox_refresh=;/);
    // A deactivated user's cookie is refused too.
    const other = await signIn(true);
    await sql`UPDATE users SET active = false WHERE id = ${other.user.id}`.execute(ctx.deps.db);
    expect((await refreshWithCookie(other.cookie)).statusCode).toBe(401);
  });
});

describe('logout', () => {
  it('ends the session and clears the cookie; the cookie is then refused', async () => {
    const { token, cookie } = await signIn(true);
    const res = await ctx.app.inject({ method: 'POST', url: '/api/user/logout', headers: bearer(token) });
    expect(res.statusCode).toBe(204);
    expect(setCookieOf(res)).toMatch(/^inbox_refresh=;/);
    expect(attributes(setCookieOf(res))).toEqual(['HttpOnly', 'Max-Age=0', `Path=${REFRESH_PATH}`, 'SameSite=Strict', 'Secure']);
    expect((await me(bearer(token))).statusCode).toBe(401);
    expect((await refreshWithCookie(cookie)).statusCode).toBe(401);
  });
});

describe('the contract’s bearer refresh', () => {
  it('is unchanged for programs: a new session, the old token ends, no cookie in the answer', async () => {
    const { user, token } = await signIn(false);
    const res = await refreshWithBearer(token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ data: { id: user.id }, access_token: expect.any(String), auth_code: expect.any(String) });
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await me(bearer(token))).statusCode).toBe(401);
    expect((await me(bearer(res.json().access_token))).statusCode).toBe(200);
    expect(await liveSessions(user.id)).toBe(1);
  });

  it('wins over a cookie sent beside it, and moves that cookie to the new session', async () => {
    const { token, cookie } = await signIn(true);
    const res = await ctx.app.inject({
      method: 'POST',
      url: REFRESH_PATH,
      headers: { ...bearer(token), cookie: `${REFRESH_COOKIE}=${cookie}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    const moved = cookieOf(res);
    expect(Number(/Max-Age=(\d+)/.exec(setCookieOf(res))?.[1])).toBeGreaterThan(30 * 86_400 - 10);
    expect((await me(bearer(token))).statusCode).toBe(401);
    // The old cookie named the ended session; the new one names the new session.
    expect((await refreshWithCookie(cookie)).statusCode).toBe(401);
    const again = await refreshWithCookie(moved);
    expect(again.statusCode, again.body).toBe(200);
    expect((await me(bearer(again.json().access_token))).statusCode).toBe(200);
  });

  it('leaves a cookie of another session alone', async () => {
    const first = await signIn(true);
    const second = await signIn(true);
    const res = await ctx.app.inject({
      method: 'POST',
      url: REFRESH_PATH,
      headers: { ...bearer(first.token), cookie: `${REFRESH_COOKIE}=${second.cookie}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect((await refreshWithCookie(second.cookie)).statusCode).toBe(200);
  });
});

describe('logs', () => {
  it('never carry the cookie or a token', async () => {
    const { cookie } = await signIn(true);
    const res = await refreshWithCookie(cookie);
    const text = JSON.stringify(logLines);
    expect(logLines.length).toBeGreaterThan(0);
    expect(text).not.toContain(cookie);
    expect(text).not.toContain(res.json().access_token);
  });
});
