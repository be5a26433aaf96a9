import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startService } from '../../harness/service.js';
import { ConfigError, loadConfig, SECRET_VARIABLES } from '../../src/config.js';
import { redactUrl } from '../../src/main.js';
import { withDatabaseName } from '../helpers/names.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'inbox-start-config-'));
  dirs.push(d);
  return d;
};

/** A new empty database on the suite's server, dropped after the file: its URL. */
async function emptyDatabase(label: string): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `inbox_t_${label}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  cleanups.push(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return withDatabaseName(adminUrl, name);
}

function problems(env: Record<string, string>, cwd: string): string[] {
  try {
    loadConfig(env, cwd);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

/** A valid value for each secret, as its variable takes it. */
const VALUES: Record<string, string> = {
  DATABASE_URL: 'postgres://inbox:pw@db.internal:5432/inbox',
  DATABASE_REPLICA_URL: 'postgres://inbox:pw@replica.internal:5432/inbox',
  INBOX_JWT_SECRET: 'a-jwt-secret-of-at-least-32-characters-0123',
  INBOX_SECRET_KEY: '00'.repeat(32),
  INBOX_SECRET_KEY_PREVIOUS: '11'.repeat(32),
  INBOX_ADMIN_API_KEY: 'an-admin-key-of-at-least-32-characters-0123',
  INBOX_ACCOUNTS_WEBHOOK_SECRET: 'accounts-secret',
  INBOX_METRICS_TOKEN: 'metrics-token',
  INBOX_SMTP_URL: 'smtp://user:pass@smtp.example.com:587',
};
/** What a secret needs beside it to be valid. */
const extra: Record<string, Record<string, string>> = {
  INBOX_SMTP_URL: { INBOX_MAIL_FROM: 'inbox@example.com' },
  DATABASE_REPLICA_URL: { DATABASE_URL: 'postgres://inbox:pw@db.internal:5432/inbox' },
};

describe('*_FILE: secrets read from files', () => {
  it.each(SECRET_VARIABLES)('%s_FILE gives %s the file’s content, trimmed', (name) => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'secret'), `${VALUES[name]}\n`);
    const env = { [`${name}_FILE`]: 'secret', ...extra[name] };
    const config = loadConfig(env, dir);
    const read = {
      DATABASE_URL: config.databaseUrl,
      DATABASE_REPLICA_URL: config.databaseReplicaUrl,
      INBOX_JWT_SECRET: config.jwtSecret,
      INBOX_SECRET_KEY: config.secretKey?.toString('hex'),
      INBOX_SECRET_KEY_PREVIOUS: config.previousSecretKey?.toString('hex'),
      INBOX_ADMIN_API_KEY: config.adminApiKey,
      INBOX_ACCOUNTS_WEBHOOK_SECRET: config.accountsWebhookSecret,
      INBOX_METRICS_TOKEN: config.metricsToken,
      INBOX_SMTP_URL: config.systemMail?.smtpUrl,
    }[name];
    expect(read).toBe(VALUES[name]);
    // The value's own checks still apply to what the file holds.
    if (name === 'INBOX_JWT_SECRET') {
      writeFileSync(path.join(dir, 'secret'), 'short\n');
      expect(problems(env, dir)).toEqual(['INBOX_JWT_SECRET: must be at least 32 characters']);
    }
  });

  it('refuses a file that cannot be read, an empty one, and a variable set both ways, naming the path and never the content', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'empty'), '\n');
    writeFileSync(path.join(dir, 'locked'), VALUES.INBOX_ADMIN_API_KEY!);
    chmodSync(path.join(dir, 'locked'), 0o000);
    const canRead = process.getuid?.() === 0; // root reads a mode-000 file
    const found = problems(
      {
        INBOX_JWT_SECRET_FILE: '/run/secrets/nowhere',
        INBOX_METRICS_TOKEN_FILE: 'empty',
        INBOX_ACCOUNTS_WEBHOOK_SECRET: 'from-env',
        INBOX_ACCOUNTS_WEBHOOK_SECRET_FILE: 'empty',
        INBOX_SECRET_KEY_FILE: dir, // a folder
        ...(canRead ? {} : { INBOX_ADMIN_API_KEY_FILE: 'locked' }),
      },
      dir,
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'INBOX_JWT_SECRET_FILE: cannot read "/run/secrets/nowhere" (ENOENT)',
        'INBOX_METRICS_TOKEN_FILE: "empty" is empty',
        'INBOX_ACCOUNTS_WEBHOOK_SECRET_FILE: set either INBOX_ACCOUNTS_WEBHOOK_SECRET or INBOX_ACCOUNTS_WEBHOOK_SECRET_FILE, not both',
        `INBOX_SECRET_KEY_FILE: cannot read "${dir}" (EISDIR)`,
        ...(canRead ? [] : ['INBOX_ADMIN_API_KEY_FILE: cannot read "locked" (EACCES)']),
      ]),
    );
    expect(found.join('\n')).not.toContain(VALUES.INBOX_ADMIN_API_KEY);
  });

  it('a production start takes its required secrets from files', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'jwt'), VALUES.INBOX_JWT_SECRET!);
    writeFileSync(path.join(dir, 'key'), VALUES.INBOX_SECRET_KEY!);
    const config = loadConfig({ NODE_ENV: 'production', INBOX_JWT_SECRET_FILE: 'jwt', INBOX_SECRET_KEY_FILE: path.join(dir, 'key') }, dir);
    expect(config.jwtSecret).toBe(VALUES.INBOX_JWT_SECRET);
    expect(problems({ NODE_ENV: 'production', INBOX_JWT_SECRET_FILE: 'jwt' }, dir)).toEqual([
      expect.stringMatching(/^INBOX_SECRET_KEY: required when NODE_ENV=production/),
    ]);
  });
});

describe('INBOX_MIGRATE_ON_START, INBOX_DB_POOL_MAX, INBOX_QUEUE_POOL_MAX, INBOX_METRICS_PORT', () => {
  it('have their defaults and refuse what they cannot take', () => {
    expect(loadConfig({}, '/srv')).toMatchObject({ migrateOnStart: true, dbPoolMax: 10, queuePoolMax: 10, metricsPort: 9464 });
    expect(loadConfig({ INBOX_MIGRATE_ON_START: 'false', INBOX_DB_POOL_MAX: '4' }, '/srv')).toMatchObject({
      migrateOnStart: false,
      dbPoolMax: 4,
    });
    expect(problems({ INBOX_MIGRATE_ON_START: 'later', INBOX_DB_POOL_MAX: '0', INBOX_QUEUE_POOL_MAX: 'ten' }, '/srv')).toEqual([
      'INBOX_DB_POOL_MAX: expected a whole number from 1 to 1000, got "0"',
      'INBOX_QUEUE_POOL_MAX: expected a whole number from 1 to 1000, got "ten"',
      'INBOX_MIGRATE_ON_START: expected true or false, got "later"',
    ]);
  });

  function inbox(args: string[], env: Record<string, string>) {
    return new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), ...args], {
        cwd: tempDir(),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', ...env },
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.stdin.end();
      child.on('exit', (code) => resolve({ code, output }));
    });
  }

  it('false: a start on an unmigrated database stops naming `inbox migrate`; after it, the schema and the queue are ready', async () => {
    const url = await emptyDatabase('empty');
    const env = { DATABASE_URL: url, INBOX_MIGRATE_ON_START: 'false' };
    const tables = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const { rows } = await c.query<{ schema: string; n: number }>(
        `SELECT table_schema AS schema, count(*)::int AS n FROM information_schema.tables
         WHERE table_schema IN ('public', 'pgboss') GROUP BY 1 ORDER BY 1`,
      );
      await c.end();
      return Object.fromEntries(rows.map((r) => [r.schema, r.n]));
    };

    const refused = await inbox(['create-workspace', '--name', 'Too soon'], env);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(
      /INBOX_MIGRATE_ON_START: false, and the database lacks \d+ migration\(s\) of this version .*run `inbox migrate` first/,
    );
    expect(await tables()).toEqual({}); // nothing was written

    const migrated = await inbox(['migrate'], env);
    expect(migrated.code, migrated.output).toBe(0);
    const after = await tables();
    expect(after.public).toBeGreaterThan(20);
    expect(after.pgboss).toBeGreaterThan(0);

    const created = await inbox(['create-workspace', '--name', 'Now'], env);
    expect(created.code, created.output).toBe(0);
    expect(JSON.parse(created.output.slice(created.output.indexOf('{')))).toMatchObject({ name: 'Now' });

    // The roles as deploy/ runs them: they check both schemas (pg-boss's included) and serve.
    const worker = await startService({
      role: 'worker',
      databaseUrl: url,
      entry: 'source',
      log: 'tail',
      env: { INBOX_MIGRATE_ON_START: 'false' },
    });
    try {
      expect(await (await fetch(`${worker.url}/readyz`)).json()).toEqual({ status: 'ready' });
    } finally {
      await worker.stop();
    }
  }, 90_000);

  it('a database a newer version migrated: this version serves it without migrating, or refuses in one line when it lacks its own', async () => {
    const url = await emptyDatabase('newer');
    const env = { DATABASE_URL: url };
    expect((await inbox(['migrate'], env)).code).toBe(0);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_version', now()::text)`);

    // A rollback, or an old process restarted during a rolling upgrade (INBOX_MIGRATE_ON_START
    // true, the default): it stopped with Kysely's "corrupted migrations" and a stack.
    const migrated = await inbox(['migrate'], env);
    expect(migrated.code, migrated.output).toBe(0);
    const created = await inbox(['create-workspace', '--name', 'Old binary'], { ...env, LOG_LEVEL: 'info' });
    expect(created.code, created.output).toBe(0);
    expect(created.output).toContain('the database was migrated by a newer version of inbox');

    const { rows } = await c.query<{ name: string }>(`SELECT name FROM kysely_migration WHERE name < '9999' ORDER BY name DESC LIMIT 1`);
    await c.query('DELETE FROM kysely_migration WHERE name = $1', [rows[0]!.name]);
    await c.end();
    const refused = await inbox(['migrate'], env);
    expect(refused.code).toBe(1);
    expect(refused.output).not.toContain('    at '); // no stack
    expect(refused.output.trim().split('\n')).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `DATABASE_URL: the database has migrations this version does not know \\(9999_from_a_newer_version…\\) and lacks 1 of its own \\(${rows[0]!.name}…\\)`,
        ),
      ),
    );
  }, 90_000);

  it('three `inbox migrate` at once on an empty database all exit 0 and leave one schema', async () => {
    const url = await emptyDatabase('migrate3');
    // Each of them prepares the partitions after the migrations: the late unique indexes were
    // built by all three at once and two runs failed ("already exists", "does not exist").
    const runs = await Promise.all([1, 2, 3].map(() => inbox(['migrate'], { DATABASE_URL: url })));
    for (const run of runs) expect(run.code, run.output).toBe(0);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query<{ name: string; valid: boolean }>(
      `SELECT c.relname AS name, x.indisvalid AS valid FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
       WHERE c.relname IN ('webhook_deliveries_id_key', 'webhook_attempts_id_key') ORDER BY 1`,
    );
    await c.end();
    expect(rows).toEqual([
      { name: 'webhook_attempts_id_key', valid: true },
      { name: 'webhook_deliveries_id_key', valid: true },
    ]);
  }, 90_000);
});

describe('the database URL in logs', () => {
  it('hides its password, in the user part or the query', () => {
    expect(redactUrl('postgres://inbox:s3cret@db:5432/inbox')).toBe('postgres://inbox:***@db:5432/inbox');
    expect(redactUrl('postgres://inbox@db/inbox?password=s3cret&sslmode=require&sslpassword=k3y')).toBe(
      'postgres://inbox@db/inbox?password=***&sslmode=require&sslpassword=***',
    );
  });
});
