import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSmtpServer } from '../../harness/smtp.js';
import { systemMailer } from '../../src/mail/system-mailer.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const SMTP_PASS = 'smtp-pass-7f3a9c1e';
const smtp = await startSmtpServer({ auth: { user: 'mailer@acme.test', pass: SMTP_PASS } });
afterAll(() => smtp.close());
// The service's clock, moved forward by tests that check expiry; it starts at the real time,
// since signed-in tokens (signed by this clock) are verified against the real one.
let clock = new Date();
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  env: {
    INBOX_SMTP_URL: smtp.url,
    INBOX_MAIL_FROM: 'Acme Inbox <inbox@acme.test>',
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_PUBLIC_URL: 'https://inbox.acme.test',
  },
  now: () => clock,
  logLines,
});
const wsUrl = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const tenant = await makeTenant(ctx.deps, { name: 'Acme Support' });
const mailer = systemMailer(ctx.deps)!;
const RESET_LINK = /https:\/\/inbox\.acme\.test\/app\/reset#token=([\w-]+)/;

beforeEach(async () => {
  clock = new Date();
  await mailer.settled();
  smtp.reset();
});

const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url, payload, headers });
const login = (email: string, password: string) => post('/api/user/login', { email, password });
const me = (token: string) => ctx.app.inject({ method: 'GET', url: '/api/user/user', headers: { authorization: `Bearer ${token}` } });
async function session(email: string, password: string): Promise<string> {
  const res = await login(email, password);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().access_token;
}
const liveSessions = async (userId: number) =>
  Number(
    (await sql<{ n: string }>`SELECT count(*) AS n FROM sessions WHERE user_id = ${userId} AND revoked_at IS NULL`.execute(ctx.deps.db))
      .rows[0]!.n,
  );
const tokenRows = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM account_tokens`.execute(ctx.deps.db)).rows[0]!.n);
const passwordHash = async (userId: number) =>
  (await ctx.deps.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow()).password_hash;

/** Asks for a reset of `email` and, once the mail has left, returns the token it carries. */
async function resetToken(email: string): Promise<string> {
  const res = await post('/api/user/password-reset', { email });
  expect(res.statusCode, res.body).toBe(202);
  await mailer.settled();
  const mail = smtp.mails.find((m) => m.to.includes(email.toLowerCase()));
  expect(mail, 'a reset mail').toBeDefined();
  return RESET_LINK.exec(mail!.mail.text ?? '')![1]!;
}

describe('POST /v1/users/me/password', () => {
  it('changes the password and ends every other session of the user, not this one', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'change@acme.test' });
    const mine = await session('change@acme.test', password);
    const other = await session('change@acme.test', password);
    const socket = new WebSocket(`${wsUrl}/v1/realtime?token=${encodeURIComponent(other)}`);
    const ready = new Promise<void>((resolve) => socket.on('message', (m) => JSON.parse(String(m)).type === 'ready' && resolve()));
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    await ready;
    const res = await post(
      '/v1/users/me/password',
      { currentPassword: password, newPassword: 'a much longer password' },
      { authorization: `Bearer ${mine}` },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ endedSessions: 1 });
    expect(await closed).toBe(4001);
    expect((await me(mine)).statusCode).toBe(200);
    expect((await me(other)).statusCode).toBe(401);
    expect(await liveSessions(user.id)).toBe(1);
    expect((await login('change@acme.test', password)).statusCode).toBe(401);
    expect((await login('change@acme.test', 'a much longer password')).statusCode).toBe(200);
  });

  it('leaves no auth code issued before the change to trade for a session', async () => {
    const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'change-codes@acme.test' });
    const mine = await session('change-codes@acme.test', password);
    const code = (await login('change-codes@acme.test', password)).json().auth_code as string;
    const res = await post(
      '/v1/users/me/password',
      { currentPassword: password, newPassword: 'a much longer password' },
      { authorization: `Bearer ${mine}` },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect((await post('/api/user/generate-token', { auth_code: code })).statusCode).toBe(401);
    const later = (await login('change-codes@acme.test', 'a much longer password')).json().auth_code as string;
    expect((await post('/api/user/generate-token', { auth_code: later })).statusCode).toBe(200);
  });

  it('refuses a wrong current password (403), a short one or the e-mail (422), and changes nothing', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'careful@acme.test' });
    const mine = await session('careful@acme.test', password);
    const other = await session('careful@acme.test', password);
    const before = await passwordHash(user.id);
    const change = (body: object) => post('/v1/users/me/password', body, { authorization: `Bearer ${mine}` });

    const wrong = await change({ currentPassword: 'not my password', newPassword: 'a much longer password' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().error).toEqual({ code: 'forbidden', message: 'currentPassword: not your current password' });
    const short = await change({ currentPassword: password, newPassword: 'eleven char' });
    expect(short.statusCode).toBe(422);
    expect(short.json().error.message).toContain('newPassword');
    const email = await change({ currentPassword: password, newPassword: 'Careful@Acme.test' });
    expect(email.statusCode).toBe(422);
    expect(email.json().error).toEqual({ code: 'validation_failed', message: 'newPassword: must not be your e-mail address' });

    expect(await passwordHash(user.id)).toBe(before);
    expect((await me(other)).statusCode).toBe(200);
  });

  it('counts wrong current passwords as failed logins (429 after 5)', async () => {
    const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'guessed@acme.test' });
    const mine = await session('guessed@acme.test', password);
    const change = (currentPassword: string) =>
      post('/v1/users/me/password', { currentPassword, newPassword: 'a much longer password' }, { authorization: `Bearer ${mine}` });
    for (let i = 0; i < 5; i++) expect((await change(`guess number ${i}`)).statusCode).toBe(403);
    const limited = await change(password);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('rate_limited');
  });

  it('two changes at once from one current password: one is made, the other is refused as a serial order would', async () => {
    const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'two-changes@acme.test' });
    const mine = await session('two-changes@acme.test', password);
    const wanted = ['the first new password', 'the second new password'];
    const answers = await Promise.all(
      wanted.map((newPassword) =>
        post('/v1/users/me/password', { currentPassword: password, newPassword }, { authorization: `Bearer ${mine}` }),
      ),
    );
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 403]);
    const made = wanted[answers.findIndex((r) => r.statusCode === 200)]!;
    const refused = answers.find((r) => r.statusCode === 403)!;
    expect(refused.json().error).toEqual({ code: 'forbidden', message: 'currentPassword: not your current password' });
    expect((await login('two-changes@acme.test', made)).statusCode).toBe(200);
    expect((await login('two-changes@acme.test', wanted.find((p) => p !== made)!)).statusCode).toBe(401);
  });

  it('takes a signed-in session only: not an API key', async () => {
    const res = await post('/v1/users/me/password', { currentPassword: 'x', newPassword: 'a much longer password' }, tenant.headers);
    expect(res.statusCode).toBe(403);
  });
});

describe('password reset by e-mail', () => {
  it('mails a single-use link valid 1 hour; using it sets the password and ends every session', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'forgot@acme.test', name: 'Grace' });
    const a = await session('forgot@acme.test', password);
    await session('forgot@acme.test', password);

    const token = await resetToken('Forgot@Acme.test');
    expect(smtp.mails).toHaveLength(1);
    const [{ mail, to }] = smtp.mails as [(typeof smtp.mails)[number]];
    expect(to).toEqual(['forgot@acme.test']);
    expect(mail.from?.text).toBe('"Acme Inbox" <inbox@acme.test>');
    expect(mail.subject).toBe('Reset your password for Acme Support');
    expect(mail.text).toContain(`https://inbox.acme.test/app/reset#token=${token}`);
    expect(mail.text).toContain('expires in 1 hour');
    expect(mail.html).toContain(`href="https://inbox.acme.test/app/reset#token=${token}"`);
    expect(mail.html).toContain('Choose a new password');
    // Only the token's hash is stored.
    const stored = await ctx.deps.db.selectFrom('account_tokens').selectAll().where('user_id', '=', user.id).execute();
    expect(stored.map((r) => r.token_hash)).toEqual([createHash('sha256').update(token).digest('hex')]);

    const confirm = await post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' });
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.json().data).toMatchObject({ id: user.id, email: 'forgot@acme.test' });
    const audited = await ctx.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'user.password_reset').execute();
    expect(audited.map((e) => [e.actor_id, e.target_id])).toEqual([[user.id, String(user.id)]]);
    expect(await liveSessions(user.id)).toBe(0);
    expect((await me(a)).statusCode).toBe(401);
    expect((await login('forgot@acme.test', password)).statusCode).toBe(401);
    expect((await login('forgot@acme.test', 'a brand new password')).statusCode).toBe(200);

    const again = await post('/api/user/password-reset/confirm', { token, newPassword: 'yet another password' });
    expect(again.statusCode).toBe(401);
    expect(again.json().error.message).toBe('token: this link is invalid, used or expired; ask for a new one');
  });

  it('a used link ends the user’s other open reset links', async () => {
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'twice@acme.test' });
    const first = await resetToken('twice@acme.test');
    smtp.reset();
    const second = await resetToken('twice@acme.test');
    expect((await post('/api/user/password-reset/confirm', { token: second, newPassword: 'a brand new password' })).statusCode).toBe(200);
    expect((await post('/api/user/password-reset/confirm', { token: first, newPassword: 'another new password' })).statusCode).toBe(401);
  });

  it('a link mailed before the user was deactivated does not work after they are reactivated', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'left@acme.test' });
    const token = await resetToken('left@acme.test');
    const patch = (active: boolean) =>
      ctx.app.inject({ method: 'PATCH', url: `/v1/users/${user.id}`, headers: tenant.headers, payload: { active } });
    expect((await patch(false)).statusCode).toBe(200);
    expect((await patch(true)).statusCode).toBe(200);
    const res = await post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' });
    expect(res.statusCode, res.body).toBe(401);
    await session('left@acme.test', password);
  });

  it('a sign-in with the old password at the same moment keeps no session past the reset', async () => {
    for (let round = 0; round < 3; round++) {
      const email = `racing-${round}@acme.test`;
      const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email });
      const token = await resetToken(email);
      smtp.reset();
      const answers = await Promise.all([
        login(email, password),
        login(email, password),
        post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' }),
      ]);
      expect(answers[2]!.statusCode).toBe(200);
      // Before the reset, a sign-in's session ends with it; after it, the old password is wrong.
      for (const res of answers.slice(0, 2)) {
        expect([200, 401]).toContain(res.statusCode);
        if (res.statusCode === 200) expect((await me(res.json().access_token)).statusCode).toBe(401);
      }
    }
  });

  it('a mail the SMTP server refuses still answers 202 and is logged without the token', async () => {
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'bounces@acme.test' });
    smtp.refuse('bounces@acme.test', 550);
    const res = await post('/api/user/password-reset', { email: 'bounces@acme.test' });
    expect(res.statusCode).toBe(202);
    await mailer.settled();
    const failed = logLines.filter((l) => l.msg === 'system mail not sent');
    expect(failed.at(-1)).toMatchObject({ mail: 'password_reset', reason: expect.stringContaining('550') });
    expect(JSON.stringify(failed)).not.toContain(SMTP_PASS);
  });

  it('refuses a link after its hour', async () => {
    const { password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'late@acme.test' });
    const token = await resetToken('late@acme.test');
    clock = new Date(clock.getTime() + 3600 * 1000 + 1);
    expect((await post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' })).statusCode).toBe(401);
    expect((await login('late@acme.test', password)).statusCode).toBe(200);
  });

  it('a bad new password leaves the link unspent and the password as it was', async () => {
    const { user } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'retry@acme.test' });
    const token = await resetToken('retry@acme.test');
    const before = await passwordHash(user.id);
    const short = await post('/api/user/password-reset/confirm', { token, newPassword: 'too short' });
    expect(short.statusCode).toBe(422);
    const email = await post('/api/user/password-reset/confirm', { token, newPassword: 'retry@acme.test' });
    expect(email.statusCode).toBe(422);
    expect(email.json().error.message).toBe('newPassword: must not be your e-mail address');
    expect(await passwordHash(user.id)).toBe(before);
    expect((await post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' })).statusCode).toBe(200);
  });

  it('answers an unknown or deactivated address exactly as a known one, and mails nothing', async () => {
    const { user } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'gone@acme.test' });
    await ctx.deps.db.updateTable('users').set({ active: false }).where('id', '=', user.id).execute();
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'known@acme.test' });
    const rowsBefore = await tokenRows();
    const unknown = await post('/api/user/password-reset', { email: 'nobody@acme.test' });
    const gone = await post('/api/user/password-reset', { email: 'gone@acme.test' });
    const known = await post('/api/user/password-reset', { email: 'known@acme.test' });
    for (const res of [unknown, gone, known]) expect(res.statusCode).toBe(202);
    expect(unknown.json().data).toEqual(known.json().data);
    expect(gone.json().data).toEqual(known.json().data);
    await mailer.settled();
    expect(smtp.mails.map((m) => m.to)).toEqual([['known@acme.test']]);
    expect(await tokenRows()).toBe(rowsBefore + 1);
  });

  it('takes 5 requests per e-mail address and hour, known or not (429 then)', async () => {
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'often@acme.test' });
    for (const email of ['often@acme.test', 'nobody-often@acme.test']) {
      for (let i = 0; i < 5; i++) expect((await post('/api/user/password-reset', { email })).statusCode).toBe(202);
      const sixth = await post('/api/user/password-reset', { email: email.toUpperCase() });
      expect(sixth.statusCode).toBe(429);
      expect(sixth.json().error.code).toBe('rate_limited');
      expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
    }
    await mailer.settled();
    expect(smtp.mails).toHaveLength(5);
    clock = new Date(clock.getTime() + 3600 * 1000 + 1);
    expect((await post('/api/user/password-reset', { email: 'often@acme.test' })).statusCode).toBe(202);
  });

  it('refuses a malformed body (422) and writes nothing', async () => {
    const before = await tokenRows();
    for (const body of [{}, { email: 'not an address' }, { email: 'a@acme.test', extra: 1 }]) {
      const res = await post('/api/user/password-reset', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
    }
    expect(await tokenRows()).toBe(before);
    await mailer.settled();
    expect(smtp.mails).toHaveLength(0);
  });

  it('never logs a token or the SMTP password', async () => {
    await makeUser(ctx.deps, tenant.workspace.id, { email: 'logged@acme.test' });
    const token = await resetToken('logged@acme.test');
    await post('/api/user/password-reset/confirm', { token, newPassword: 'a brand new password' });
    const text = JSON.stringify(logLines);
    expect(logLines.some((l) => l.msg === 'system mail sent')).toBe(true);
    expect(text).not.toContain(token);
    expect(text).not.toContain(SMTP_PASS);
    expect(text).not.toContain('a brand new password');
  });
});
