import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { JWT_SECRET_FILE, readOrCreateSecretFile, SECRET_KEY_FILE } from '../../src/main.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-secret-'));
  dirs.push(dir);
  return dir;
}

describe('generated secret files', () => {
  it('are created once: processes racing on a fresh data dir all end up with the winner’s secret', async () => {
    const file = path.join(await tempDir(), 'data', 'jwt-secret');
    const secrets = await Promise.all(Array.from({ length: 12 }, () => readOrCreateSecretFile(file, JWT_SECRET_FILE)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(32);
    expect(await readFile(file, 'utf8')).toBe(secrets[0]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(path.dirname(file))).toEqual(['jwt-secret']); // no drafts left behind
    expect(await readOrCreateSecretFile(file, JWT_SECRET_FILE)).toBe(secrets[0]); // and kept on the next start
  });

  it('stop the start when the file is shorter than 32 characters, naming the file, and leave it alone', async () => {
    const file = path.join(await tempDir(), 'jwt-secret');
    await writeFile(file, 'too-short\n');
    const err = await readOrCreateSecretFile(file, JWT_SECRET_FILE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(new RegExp(`^${file}: holds 9 characters, a secret needs at least 32`)),
    ]);
    expect(await readFile(file, 'utf8')).toBe('too-short\n');
  });

  it('hold the credentials key as a 32-byte key, generated once like the JWT secret', async () => {
    const file = path.join(await tempDir(), 'data', 'secret-key');
    const keys = await Promise.all(Array.from({ length: 8 }, () => readOrCreateSecretFile(file, SECRET_KEY_FILE)));
    expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(1);
    expect(keys[0]).toHaveLength(32);
    expect(await readFile(file, 'utf8')).toBe(keys[0]!.toString('hex'));
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readOrCreateSecretFile(file, SECRET_KEY_FILE)).equals(keys[0]!)).toBe(true);
  });

  it('stop the start when the key file does not hold a 32-byte key, naming the file and INBOX_SECRET_KEY', async () => {
    const file = path.join(await tempDir(), 'secret-key');
    await writeFile(file, 'ab'.repeat(31)); // 31 bytes
    const err = await readOrCreateSecretFile(file, SECRET_KEY_FILE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(new RegExp(`^${file}: holds 62 characters, expected a 32-byte key .* or set INBOX_SECRET_KEY\\)$`)),
    ]);
  });

  /** Runs `inbox serve` on `dataDir` until it exits; its exit code and everything it printed. */
  async function serveOn(dataDir: string) {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info', INBOX_DATA_DIR: dataDir, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    return { code, output };
  }

  it('`inbox serve` on a data dir with a short jwt-secret exits 1 with that line, before starting a database', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, 'jwt-secret'), '');
    const { code, output } = await serveOn(dataDir);
    expect(code, output).toBe(1);
    expect(output).toContain(`${path.join(dataDir, 'jwt-secret')}: holds 0 characters, a secret needs at least 32`);
    expect(output).not.toContain('starting embedded PostgreSQL');
  });

  it('`inbox serve` on a data dir with a bad secret-key exits 1 with that line, before starting a database', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, 'secret-key'), 'not-a-key');
    const { code, output } = await serveOn(dataDir);
    expect(code, output).toBe(1);
    expect(output).toContain(`${path.join(dataDir, 'secret-key')}: holds 9 characters, expected a 32-byte key`);
    expect(output).not.toContain('starting embedded PostgreSQL');
  });
});
