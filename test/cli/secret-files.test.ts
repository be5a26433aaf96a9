import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { readOrCreateSecretFile } from '../../src/main.js';

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
    const secrets = await Promise.all(Array.from({ length: 12 }, () => readOrCreateSecretFile(file)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]!.length).toBeGreaterThanOrEqual(32);
    expect(await readFile(file, 'utf8')).toBe(secrets[0]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(path.dirname(file))).toEqual(['jwt-secret']); // no drafts left behind
    expect(await readOrCreateSecretFile(file)).toBe(secrets[0]); // and kept on the next start
  });

  it('stop the start when the file is shorter than 32 characters, naming the file, and leave it alone', async () => {
    const file = path.join(await tempDir(), 'jwt-secret');
    await writeFile(file, 'too-short\n');
    const err = await readOrCreateSecretFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([expect.stringMatching(new RegExp(`^${file}: holds 9 characters, a secret needs at least 32`))]);
    expect(await readFile(file, 'utf8')).toBe('too-short\n');
  });

  it('`inbox serve` on a data dir with a short jwt-secret exits 1 with that line, before starting a database', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, 'jwt-secret'), '');
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), 'serve'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info', INBOX_DATA_DIR: dataDir, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(1);
    expect(output).toContain(`${path.join(dataDir, 'jwt-secret')}: holds 0 characters, a secret needs at least 32`);
    expect(output).not.toContain('starting embedded PostgreSQL');
  });
});
