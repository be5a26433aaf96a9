import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import argon2 from 'argon2';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../helpers/db.js';
import { withDatabaseName } from '../helpers/names.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const database = await createTestDatabase();
afterAll(() => database.drop());

/** Runs `inbox <args>` against this file's database and returns its exit code and output. */
function inbox(
  args: string[],
  input = '',
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: database.url, LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end(input);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('CLI admin commands (an operator’s first steps on a new VM)', () => {
  it('creates a workspace, a user (password from stdin), an API key and a connection', async () => {
    const ws = await inbox(['create-workspace', '--name', 'Acme Support']);
    expect(ws.code, ws.stderr).toBe(0);
    const workspace = JSON.parse(ws.stdout);
    expect(workspace).toMatchObject({ id: expect.any(Number), name: 'Acme Support', appId: expect.stringMatching(/^app_/) });

    const user = await inbox(
      ['create-user', '--workspace', String(workspace.id), '--name', 'Ada', '--email', 'ada@acme.test', '--roles', 'admin'],
      'a long password\n',
    );
    expect(user.code, user.stderr).toBe(0);
    expect(JSON.parse(user.stdout)).toEqual({
      id: expect.any(Number),
      name: 'Ada',
      email: 'ada@acme.test',
      workspaces_id: workspace.id,
      roles: ['admin'],
    });
    expect(user.stdout).not.toContain('a long password');

    const key = await inbox(['create-api-key', '--workspace', String(workspace.id), '--name', 'ops', '--scopes', 'admin']);
    expect(key.code, key.stderr).toBe(0);
    expect(JSON.parse(key.stdout)).toMatchObject({ scopes: ['admin'], key: expect.stringMatching(/^inbox_ak_/) });

    const conn = await inbox([
      'create-connection',
      '--workspace',
      String(workspace.id),
      '--integration',
      'whatsapp',
      '--account',
      '106540352242922',
      '--name',
      'Main line',
    ]);
    expect(conn.code, conn.stderr).toBe(0);
    expect(JSON.parse(conn.stdout)).toMatchObject({ integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

    // Each is in the workspace's audit log, the system's (whoever runs the CLI holds the database).
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT action, actor_type, target_type, changes FROM audit_log WHERE workspace_id = $1 ORDER BY id',
        [workspace.id],
      );
      expect(rows.map((r) => [r.action, r.actor_type, r.target_type])).toEqual([
        ['workspace.created', 'system', 'workspace'],
        ['user.created', 'system', 'user'],
        ['api_key.created', 'system', 'api_key'],
        ['connection.created', 'system', 'connection'],
      ]);
      expect(rows[1].changes).toMatchObject({ roles: { old: null, new: ['admin'] }, password: { old: null, new: '[set]' } });
      expect(rows[2].changes.key).toEqual({ old: null, new: '[set]' });
      expect(JSON.stringify(rows)).not.toContain('a long password');
    } finally {
      await client.end();
    }
  }, 60_000);

  it('reads the new user’s password from INBOX_NEW_PASSWORD_FILE, as every secret may be', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-password-'));
    try {
      const file = path.join(dir, 'password');
      await writeFile(file, 'a password from a file\n');
      const ws = JSON.parse((await inbox(['create-workspace', '--name', 'From files'])).stdout);
      const args = ['create-user', '--workspace', String(ws.id), '--name', 'Fi', '--email', 'fi@acme.test'];
      const user = await inbox(args, '', { INBOX_NEW_PASSWORD_FILE: file });
      expect(user.code, user.stderr).toBe(0);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', ['fi@acme.test']);
      await client.end();
      expect(await argon2.verify(rows[0]!.password_hash, 'a password from a file')).toBe(true);

      const unreadable = await inbox([...args.slice(0, -1), 'fo@acme.test'], '', { INBOX_NEW_PASSWORD_FILE: path.join(dir, 'missing') });
      expect(unreadable.code).toBe(1);
      expect(unreadable.stderr).toContain(`INBOX_NEW_PASSWORD_FILE: cannot read "${path.join(dir, 'missing')}" (ENOENT)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('prints only its JSON on stdout, its log lines going to stderr, at any LOG_LEVEL', async () => {
    // `KEY=$(npx inbox create-api-key … | json key)` (README) must work with LOG_LEVEL=debug in .env.
    const ws = await inbox(['create-workspace', '--name', 'Logged'], '', { LOG_LEVEL: 'debug' });
    expect(ws.code, ws.stderr).toBe(0);
    expect(JSON.parse(ws.stdout)).toMatchObject({ name: 'Logged' });
    // An empty database: migrating it logs what it applied.
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    const name = `inbox_t_cli_log_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const migrate = await inbox(['migrate'], '', { LOG_LEVEL: 'info', DATABASE_URL: withDatabaseName(inject('pgAdminUrl'), name) });
      expect(migrate.code, migrate.stderr).toBe(0);
      expect(JSON.parse(migrate.stdout)).toEqual({ migrated: true });
      expect(migrate.stderr).toMatch(/^\{"level":30,.*"msg":"database migrated"/m);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 90_000);

  it('explains what is wrong and exits non-zero', async () => {
    const missing = await inbox(['create-workspace']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('--name is required');

    const shortPassword = await inbox(['create-user', '--workspace', '1', '--name', 'A', '--email', 'a@b.test'], 'short\n');
    expect(shortPassword.code).toBe(64);
    expect(shortPassword.stderr).toContain('at least 8 characters');

    const noWorkspace = await inbox(['create-api-key', '--workspace', '999999', '--name', 'x']);
    expect(noWorkspace.code).toBe(1);
    expect(noWorkspace.stderr).toContain('workspace 999999 not found');

    const badIntegration = await inbox(['create-connection', '--workspace', '1', '--integration', 'fax', '--account', '1', '--name', 'x']);
    expect(badIntegration.code).toBe(1);
    expect(badIntegration.stderr).toContain('integrationKey must be one of');
  }, 60_000);
});
