import { describe, expect, it } from 'vitest';
import { packagesResolvedBy } from '../helpers/resolved-packages.js';

/**
 * What every process of the service loads at start, and what it loads only once it needs it:
 * packages a role or a feature nobody uses would otherwise hold in every process's memory.
 */
const cli = await packagesResolvedBy(['src/cli.ts', 'help']);

describe('packages loaded with their first use', () => {
  // Heap of `dist/src/app.js` loaded with these: 53.5 MB; without: 34.2 MB.
  const LAZY = ['@modelcontextprotocol/sdk', 'zod', 'archiver', 'imapflow', 'mailparser', 'nodemailer'];

  it('are not among what the CLI (serve included) imports', () => {
    expect(cli).toContain('fastify');
    expect(cli.filter((s) => LAZY.some((p) => s === p || s.startsWith(`${p}/`)))).toEqual([]);
  });
});

/**
 * A `--role worker` process serves only /healthz, /readyz and /metrics (src/http/server.ts):
 * the api's routes and the plugins they need are imported by main.ts only for a role that
 * serves them (about 35 MB of a worker's RSS at rest).
 */
describe("the api's routes", () => {
  const API_ONLY = ['@fastify/jwt', '@fastify/websocket', '@fastify/swagger', '@fastify/swagger-ui', '@fastify/static', 'openid-client'];

  it('are not among what the CLI (serve included) imports, and come with src/app.ts', async () => {
    expect(cli.filter((s) => API_ONLY.includes(s))).toEqual([]);
    const app = await packagesResolvedBy(['--input-type=module', '-e', `await import('./src/app.ts');`]);
    expect(API_ONLY.filter((p) => !app.includes(p))).toEqual([]);
  }, 60_000);
});

/** The AWS SDK is about 25 MB: a service storing attachments in PostgreSQL (the default) never loads it. */
describe('the AWS SDK', () => {
  const build = (env: string) => [
    '--input-type=module',
    '-e',
    `const { createStorage } = await import('./src/attachments/storage-factory.ts');
     const { loadConfig } = await import('./src/config.ts');
     await createStorage(loadConfig(${env}), undefined);`,
  ];

  it('is not among what the CLI (serve included) imports, nor loaded by the postgres store', async () => {
    expect(cli.filter((s) => s.startsWith('@aws-sdk/'))).toEqual([]);
    const postgres = await packagesResolvedBy(build('{}'));
    expect(postgres).toContain('kysely');
    expect(postgres.filter((s) => s.startsWith('@aws-sdk/'))).toEqual([]);
  }, 60_000);

  it('is loaded when the s3 store is built', async () => {
    expect(await packagesResolvedBy(build(`{ INBOX_STORAGE: 's3', INBOX_S3_BUCKET: 'b' }`))).toContain('@aws-sdk/client-s3');
  }, 60_000);
});
