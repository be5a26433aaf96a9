import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const SECRET = 'accounts-webhook-secret';
const ctx = await useTestContext({ env: { INBOX_ACCOUNTS_WEBHOOK_SECRET: SECRET } });
const tenant = await makeTenant(ctx.deps);

const hmac = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');
const post = (body: string, signature?: string, app = ctx.app) =>
  app.inject({
    method: 'POST',
    url: '/v1/accounts/webhook',
    headers: { 'content-type': 'application/json', ...(signature !== undefined ? { 'x-webhook-signature': signature } : {}) },
    payload: body,
  });

async function signedIn(email: string) {
  const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email });
  const login = async () => (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password } })).json();
  return { user, login };
}
const me = (token: string) => ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: `Bearer ${token}` } });

describe('POST /v1/accounts/webhook with a secret', () => {
  it('session.revoked with a valid signature (prefix optional) ends all the user’s sessions', async () => {
    const { user, login } = await signedIn('revoke-all@acme.test');
    for (const prefix of ['', 'sha256=']) {
      const a = (await login()).access_token;
      const b = (await login()).access_token;
      const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
      const res = await post(body, `${prefix}${hmac(body)}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ received: true, acted: true, sessionsEnded: 2 });
      expect((await me(a)).statusCode).toBe(401);
      expect((await me(b)).statusCode).toBe(401);
    }
  });

  it('checks the signature over the exact bytes, so a body that is not valid UTF-8 still verifies', async () => {
    const { user, login } = await signedIn('revoke-bytes@acme.test');
    const token = (await login()).access_token;
    // A stray Latin-1 byte in a field nobody reads: the sender signed these bytes, not U+FFFD.
    const bytes = Buffer.concat([
      Buffer.from(`{"type":"session.revoked","data":{"userId":${user.id}},"note":"caf`),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]);
    const signature = createHmac('sha256', SECRET).update(bytes).digest('hex');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'application/json', 'x-webhook-signature': signature },
      payload: bytes,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ acted: true, sessionsEnded: 1 });
    expect((await me(token)).statusCode).toBe(401);
    // the same digest over the text as decoded (U+FFFD for the byte) is not the signature
    const decoded = createHmac('sha256', SECRET).update(bytes.toString('utf8')).digest('hex');
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/v1/accounts/webhook',
          headers: { 'content-type': 'application/json', 'x-webhook-signature': decoded },
          payload: bytes,
        })
      ).statusCode,
    ).toBe(401);
  });

  it('with data.sessionId ends only that session', async () => {
    const { user, login } = await signedIn('revoke-one@acme.test');
    const a = (await login()).access_token;
    const b = (await login()).access_token;
    const jti = JSON.parse(Buffer.from(a.split('.')[1]!, 'base64url').toString()).jti;
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id, sessionId: jti } });
    expect((await post(body, hmac(body))).statusCode).toBe(200);
    expect((await me(a)).statusCode).toBe(401);
    expect((await me(b)).statusCode).toBe(200);
  });

  it('session.revoked with a sessionId spends that session’s auth codes only', async () => {
    const { user, login } = await signedIn('revoke-one-code@acme.test');
    const a = await login();
    const b = await login();
    const jti = JSON.parse(Buffer.from(a.access_token.split('.')[1]!, 'base64url').toString()).jti;
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id, sessionId: jti } });
    expect((await post(body, hmac(body))).statusCode).toBe(200);
    const exchange = (code: string) => ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: code } });
    expect((await exchange(a.auth_code)).statusCode).toBe(401);
    expect((await exchange(b.auth_code)).statusCode).toBe(200);
  });

  it('refuses a missing, wrong, uppercase or malformed digest with 401 and acts on nothing', async () => {
    const { user, login } = await signedIn('kept@acme.test');
    const t = (await login()).access_token;
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
    for (const sig of [
      undefined,
      hmac(body, 'wrong'),
      hmac(body).toUpperCase(),
      `sha256=${hmac(body).toUpperCase()}`,
      hmac(body).slice(0, 63),
      `${hmac(body)}0`,
      `sha256:${hmac(body)}`,
      'z'.repeat(64),
    ]) {
      const res = await post(body, sig);
      expect(res.statusCode, String(sig)).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
    expect((await me(t)).statusCode).toBe(200);
  });

  it('judges a body whose content type cannot be read (empty, `json`) by its signature alone, never 415', async () => {
    const { user, login } = await signedIn('odd-type@acme.test');
    const t = (await login()).access_token;
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
    for (const type of ['', 'json']) {
      const wrong = await ctx.app.inject({
        method: 'POST',
        url: '/v1/accounts/webhook',
        headers: { 'content-type': type, 'x-webhook-signature': hmac(body, 'wrong') },
        payload: body,
      });
      expect(wrong.statusCode, JSON.stringify(type)).toBe(401);
      expect(wrong.json().error.code).toBe('unauthorized');
    }
    expect((await me(t)).statusCode).toBe(200);
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/accounts/webhook',
      headers: { 'content-type': 'json', 'x-webhook-signature': hmac(body) },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ acted: true });
    expect((await me(t)).statusCode).toBe(401);
  });

  it('parses and drops other event types', async () => {
    const body = JSON.stringify({ type: 'user.updated', data: { userId: 1 } });
    const res = await post(body, hmac(body));
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ received: true, acted: false });
  });
  it('leaves no auth code issued before a user-wide revocation to trade for a new session', async () => {
    const { user, login } = await signedIn('revoke-codes@acme.test');
    const code = (await login()).auth_code as string;
    const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
    expect((await post(body, hmac(body))).json().data).toMatchObject({ acted: true });
    const res = await ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: code } });
    expect(res.statusCode).toBe(401);
    // a code issued after it works as ever
    const later = (await login()).auth_code as string;
    expect((await ctx.app.inject({ method: 'POST', url: '/api/user/generate-token', payload: { auth_code: later } })).statusCode).toBe(200);
  });

  it('drops a session.revoked naming no user it could be: unknown, malformed or beyond any user id', async () => {
    for (const userId of [999_999, 'x', 0, 2_147_483_648, 99_999_999_999_999]) {
      const body = JSON.stringify({ type: 'session.revoked', data: { userId } });
      const res = await post(body, hmac(body));
      expect(res.statusCode, String(userId)).toBe(200);
      expect(res.json().data).toEqual({ received: true, acted: false });
    }
  });
});

describe('POST /v1/accounts/webhook without a secret (development)', () => {
  it('accepts unsigned events and ignores what does not parse', async () => {
    const dev = await startTestContext({ database: ctx.database });
    try {
      const garbage = await post('{not json', undefined, dev.app);
      expect(garbage.statusCode).toBe(200);
      expect(garbage.json().data.acted).toBe(false);
      const { user, login } = await signedIn('dev@acme.test');
      const t = (await login()).access_token;
      const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
      expect((await post(body, undefined, dev.app)).json().data.acted).toBe(true);
      expect((await me(t)).statusCode).toBe(401);
    } finally {
      await dev.close();
    }
  });
});

describe('POST /v1/accounts/webhook in production without a secret', () => {
  it('acts on nothing and answers 401 unauthorized, signed or not', async () => {
    const prod = await startTestContext({ database: ctx.database, env: { NODE_ENV: 'production' } });
    try {
      expect(prod.deps.config.production).toBe(true);
      const { user, login } = await signedIn('prod@acme.test');
      const t = (await login()).access_token;
      const body = JSON.stringify({ type: 'session.revoked', data: { userId: user.id } });
      for (const sig of [undefined, hmac(body)]) {
        const res = await post(body, sig, prod.app);
        expect(res.statusCode, String(sig)).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
      expect((await me(t)).statusCode).toBe(200);
    } finally {
      await prod.close();
    }
  });
});
