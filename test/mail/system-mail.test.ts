import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startSmtpServer } from '../../harness/smtp.js';
import { type ConfigError, loadConfig } from '../../src/config.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const smtp = await startSmtpServer();
afterAll(() => smtp.close());
const count = async (db: typeof unconfigured.deps.db, table: 'users' | 'account_tokens') =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db)).rows[0]!.n);

const unconfigured = await useTestContext();
// Mail is set, but the SMTP host is loopback and the guard stays on.
const guarded = await useTestContext({ env: { INBOX_SMTP_URL: smtp.url, INBOX_MAIL_FROM: 'inbox@acme.test' } });

describe('without INBOX_SMTP_URL', () => {
  it('answers 503 mail_unavailable to resets and invites, and writes nothing', async () => {
    const tenant = await makeTenant(unconfigured.deps);
    await makeUser(unconfigured.deps, tenant.workspace.id, { email: 'someone@acme.test' });
    const users = await count(unconfigured.deps.db, 'users');
    for (const [url, payload, headers] of [
      ['/api/user/password-reset', { email: 'someone@acme.test' }, {}],
      ['/api/user/password-reset', { email: 'nobody@acme.test' }, {}],
      ['/v1/users', { name: 'Invited', email: 'invited@acme.test' }, tenant.headers],
    ] as const) {
      const res = await unconfigured.app.inject({ method: 'POST', url, payload, headers });
      expect(res.statusCode, url).toBe(503);
      expect(res.json().error).toEqual({
        code: 'mail_unavailable',
        message: 'the service cannot send e-mail: the operator has not set INBOX_SMTP_URL and INBOX_MAIL_FROM (docs/accounts.md)',
      });
    }
    expect(await count(unconfigured.deps.db, 'users')).toBe(users);
    expect(await count(unconfigured.deps.db, 'account_tokens')).toBe(0);
    // A user with a password needs no mail.
    const direct = await unconfigured.app.inject({
      method: 'POST',
      url: '/v1/users',
      payload: { name: 'Direct', email: 'direct@acme.test', password: 'long enough' },
      headers: tenant.headers,
    });
    expect(direct.statusCode).toBe(201);
  });
});

describe('the address guard', () => {
  it('refuses an SMTP host on a loopback address unless INBOX_ALLOW_PRIVATE_SMTP=true', async () => {
    const tenant = await makeTenant(guarded.deps);
    const res = await guarded.app.inject({
      method: 'POST',
      url: '/v1/users',
      payload: { name: 'Invited', email: 'invited@acme.test' },
      headers: tenant.headers,
    });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.message).toContain('INBOX_SMTP_URL: refused: 127.0.0.1 is a loopback address');
    expect(smtp.mails).toHaveLength(0);
    expect(await count(guarded.deps.db, 'users')).toBe(0);
  });
});

describe('configuration', () => {
  const load = (env: Record<string, string>) => () => loadConfig(env);
  it('takes both variables or neither, and never echoes the URL', () => {
    expect(loadConfig({}).systemMail).toBeUndefined();
    expect(loadConfig({ INBOX_SMTP_URL: 'smtps://u:p@smtp.acme.test', INBOX_MAIL_FROM: 'Acme <inbox@acme.test>' }).systemMail).toEqual({
      smtpUrl: 'smtps://u:p@smtp.acme.test',
      from: 'Acme <inbox@acme.test>',
    });
    expect(load({ INBOX_SMTP_URL: 'smtp://u:p@smtp.acme.test' })).toThrow(/INBOX_MAIL_FROM: required when INBOX_SMTP_URL is set/);
    expect(load({ INBOX_MAIL_FROM: 'inbox@acme.test' })).toThrow(/INBOX_SMTP_URL: required when INBOX_MAIL_FROM is set/);
    expect(load({ INBOX_SMTP_URL: 'smtp://u:p@smtp.acme.test', INBOX_MAIL_FROM: 'no address here' })).toThrow(/INBOX_MAIL_FROM: expected/);
    let problem = '';
    try {
      loadConfig({ INBOX_SMTP_URL: 'https://user:hunter2-secret@smtp.acme.test', INBOX_MAIL_FROM: 'inbox@acme.test' });
    } catch (err) {
      problem = (err as ConfigError).problems.join('\n');
    }
    expect(problem).toContain('INBOX_SMTP_URL: expected an smtp:// or smtps:// URL');
    expect(problem).not.toContain('hunter2-secret');
  });
});
