import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The AWS SDK is about 25 MB of a process's memory: a service storing attachments in
 * PostgreSQL (the default) never loads it. The modules a process imports are recorded by a
 * resolve hook (test/fixtures/imports), in a process of their own, as `npm start` would load them.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const RECORD = path.join(ROOT, 'test/fixtures/imports/record.mjs');

/** The packages a process resolves: `node --import tsx <args>` with the recording hook. */
function packagesResolvedBy(args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', RECORD, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${stderr.slice(-2000)}`));
      else resolve([...stderr.matchAll(/^resolved (\S+)$/gm)].map((m) => m[1]!));
    });
  });
}

describe('the AWS SDK', () => {
  const build = (env: string) => [
    '--input-type=module',
    '-e',
    `const { createStorage } = await import('./src/attachments/storage-factory.ts');
     const { loadConfig } = await import('./src/config.ts');
     await createStorage(loadConfig(${env}), undefined);`,
  ];

  it('is not among what the CLI (serve included) imports, nor loaded by the postgres store', async () => {
    const cli = await packagesResolvedBy(['src/cli.ts', 'help']);
    expect(cli).toContain('fastify');
    expect(cli.filter((s) => s.startsWith('@aws-sdk/'))).toEqual([]);
    const postgres = await packagesResolvedBy(build('{}'));
    expect(postgres).toContain('kysely');
    expect(postgres.filter((s) => s.startsWith('@aws-sdk/'))).toEqual([]);
  }, 60_000);

  it('is loaded when the s3 store is built', async () => {
    expect(await packagesResolvedBy(build(`{ INBOX_STORAGE: 's3', INBOX_S3_BUCKET: 'b' }`))).toContain('@aws-sdk/client-s3');
  }, 60_000);
});
