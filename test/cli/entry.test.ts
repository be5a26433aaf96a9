import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module of bin/, without declarations
import { hasSources, isBuildFresh } from '../../bin/build-state.js';
import { applyDotEnv, ConfigError, loadConfig } from '../../src/config.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'inbox-entry-'));
  dirs.push(d);
  return d;
};

function run(bin: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...options.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.end();
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
const inbox = (args: string[], options?: Parameters<typeof run>[2]) => run(path.join(ROOT, 'bin/inbox.js'), args, options);

describe('inbox --help and --version', () => {
  it('prints the version of package.json', async () => {
    const out = await inbox(['--version']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`${VERSION}\n`);
  });

  it('prints the usage on --help, -h and a command’s --help, and exits 0', async () => {
    for (const args of [['--help'], ['-h'], ['create-user', '--help']]) {
      const out = await inbox(args);
      expect(out.code, `${args.join(' ')}: ${out.stderr}`).toBe(0);
      expect(out.stdout).toContain('Usage: inbox <command> [options]');
      expect(out.stdout).toContain('create-user --workspace ID');
      expect(out.stdout).toContain('a worker on\n                                     INBOX_METRICS_PORT (default 9464)');
      expect(out.stdout).toContain('INBOX_MIGRATE_ON_START=false');
    }
  }, 90_000);

  it('still refuses an unknown command with the usage and exit 64', async () => {
    const out = await inbox(['--frobnicate']);
    expect(out.code).toBe(64);
    expect(out.stderr).toContain('unknown command "--frobnicate"');
  }, 90_000);
});

describe('.env in the working directory', () => {
  it('fills what the environment does not set; the environment wins', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '.env'), '# a comment\nPORT=4100\nHOST="0.0.0.0"\nLOG_LEVEL=debug\n');
    const env: Record<string, string | undefined> = { LOG_LEVEL: 'error' };
    applyDotEnv(dir, env);
    expect(env).toEqual({ PORT: '4100', HOST: '0.0.0.0', LOG_LEVEL: 'error' });
  });

  it('sets no secret the environment already sets the other way (NAME or NAME_FILE): the environment wins', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'jwt-secret'), 'a-jwt-secret-read-from-a-file-of-the-environment\n');
    writeFileSync(
      path.join(dir, '.env'),
      'INBOX_SECRET_KEY_FILE=/run/secrets/not-here\nINBOX_JWT_SECRET=a-jwt-secret-of-the-dot-env-file-0123456789\n' +
        'INBOX_INTEGRATIONS_FILE=./not-here.json\nINBOX_ADMIN_API_KEY_FILE=./admin-key\n',
    );
    writeFileSync(path.join(dir, 'admin-key'), 'an-admin-key-of-the-dot-env-file-0123456789\n');
    const env: Record<string, string | undefined> = {
      INBOX_SECRET_KEY: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
      INBOX_JWT_SECRET_FILE: 'jwt-secret',
      INBOX_INTEGRATIONS: '{}',
    };
    applyDotEnv(dir, env);
    // What the environment sets one way is not set the other; the rest of .env still fills in.
    expect(env).toEqual({
      INBOX_SECRET_KEY: '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
      INBOX_JWT_SECRET_FILE: 'jwt-secret',
      INBOX_INTEGRATIONS: '{}',
      INBOX_ADMIN_API_KEY_FILE: './admin-key',
    });
    const config = loadConfig(env, dir);
    expect(config.jwtSecret).toBe('a-jwt-secret-read-from-a-file-of-the-environment');
    expect(config.adminApiKey).toBe('an-admin-key-of-the-dot-env-file-0123456789');
    // A .env that sets a secret both ways is still refused, as the environment would be.
    const both = tempDir();
    writeFileSync(path.join(both, '.env'), 'INBOX_METRICS_TOKEN=abc\nINBOX_METRICS_TOKEN_FILE=./token\n');
    const fromBoth: Record<string, string | undefined> = {};
    applyDotEnv(both, fromBoth);
    expect(() => loadConfig(fromBoth, both)).toThrow(/INBOX_METRICS_TOKEN_FILE: set either/);
  });

  it('is optional, and one that cannot be read is a configuration error', () => {
    const env: Record<string, string | undefined> = {};
    applyDotEnv(tempDir(), env);
    expect(env).toEqual({});
    const dir = tempDir();
    mkdirSync(path.join(dir, '.env')); // a folder where the file should be
    expect(() => applyDotEnv(dir, {})).toThrow(ConfigError);
  });

  it('reaches the service’s configuration through the CLI', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '.env'), 'PORT=eighty\n');
    const fromFile = await inbox(['migrate'], { cwd: dir });
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toContain('PORT: expected a whole number from 0 to 65535, got "eighty"');
    const envWins = await inbox(['migrate'], { cwd: dir, env: { PORT: 'ninety' } });
    expect(envWins.code).toBe(1);
    expect(envWins.stderr).toContain('got "ninety"');
    expect(envWins.stderr).not.toContain('eighty');
  }, 90_000);
});

describe('the build stamp: a start skips a build that would change nothing', () => {
  /** A checkout with bin/ and node_modules of this one, a source CLI and a dist CLI that say which ran. */
  function checkout() {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    mkdirSync(path.join(dir, 'src'));
    mkdirSync(path.join(dir, 'dist', 'src'), { recursive: true });
    writeFileSync(path.join(dir, 'src', 'cli.ts'), "const from: string = 'source';\nconsole.log(from);\n");
    writeFileSync(path.join(dir, 'dist', 'src', 'cli.js'), "console.log('dist');\n");
    return dir;
  }
  const stamp = (dir: string, at: number) => {
    writeFileSync(path.join(dir, 'dist', '.build-stamp'), '');
    utimesSync(path.join(dir, 'dist', '.build-stamp'), at, at);
  };
  const age = (file: string, at: number) => utimesSync(file, at, at);

  it('counts a build fresh only when no source is newer than its stamp', () => {
    const dir = checkout();
    const now = Date.now() / 1000;
    for (const p of ['package.json', 'src/cli.ts', 'src']) age(path.join(dir, p), now - 100);
    expect(hasSources(dir)).toBe(true);
    expect(isBuildFresh(dir)).toBe(false); // no stamp: never built
    stamp(dir, now - 50);
    expect(isBuildFresh(dir)).toBe(true);
    mkdirSync(path.join(dir, 'migrations'));
    writeFileSync(path.join(dir, 'migrations', '0001_a.ts'), '');
    expect(isBuildFresh(dir)).toBe(false); // a new migration
    stamp(dir, now + 10);
    expect(isBuildFresh(dir)).toBe(true);
    age(path.join(dir, 'src', 'cli.ts'), now + 20);
    expect(isBuildFresh(dir)).toBe(false); // an edited source
  });

  it('runs the compiled CLI when the build is fresh, else the TypeScript source', async () => {
    const dir = checkout();
    const bin = path.join(dir, 'bin', 'inbox.js');
    const now = Date.now() / 1000;
    for (const p of ['package.json', 'src/cli.ts', 'src']) age(path.join(dir, p), now - 100);
    stamp(dir, now - 50);
    expect((await run(bin, [], { cwd: dir })).stdout).toBe('dist\n');
    age(path.join(dir, 'src', 'cli.ts'), now);
    expect((await run(bin, [], { cwd: dir })).stdout).toBe('source\n');
  });
});
