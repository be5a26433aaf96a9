import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ctx = await useTestContext();

/** Runs `inbox <args>` against this file's database. */
function inbox(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: ctx.database.url, LOG_LEVEL: 'warn', INBOX_PUBLIC_URL: 'https://inbox.acme.test' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end();
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('inbox reset-password', () => {
  it('prints a one-time reset link for an operator without mail, which works like a mailed one', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { user } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'locked.out@acme.test' });
    const run = await inbox(['reset-password', '--email', 'Locked.Out@acme.test']);
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed).toEqual({
      email: 'locked.out@acme.test',
      link: expect.stringMatching(/^https:\/\/inbox\.acme\.test\/app\/reset#token=[\w-]{43}$/),
      expiresAt: expect.any(String),
    });
    const token = printed.link.split('#token=')[1];
    const confirm = await ctx.app.inject({
      method: 'POST',
      url: '/api/user/password-reset/confirm',
      payload: { token, newPassword: 'set by the operator link' },
    });
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.json().data.id).toBe(user.id);
  });

  it('says so when no user has the e-mail, and exits non-zero', async () => {
    const run = await inbox(['reset-password', '--email', 'nobody@acme.test']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('inbox: user with this e-mail not found\n');
    const missing = await inbox(['reset-password']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('--email is required');
  });

  it('is in the help', async () => {
    const help = await inbox(['--help']);
    expect(help.stdout).toContain('reset-password --email EMAIL');
  });
});
