import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import type { Executor } from '../../src/db/database.js';
import { TEMPLATE_DB, withDatabaseName } from './names.js';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Clones the migrated template into a database of this test file's own. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `inbox_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabaseName(adminUrl, name),
    name,
    async drop() {
      // Callers close their pools first; FORCE only ends stragglers.
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * The UTC day (its midnight, in ms) the template was migrated on: the partitions made when
 * migrating count their days from it, and a suite that crosses midnight must too.
 */
export async function migratedDay(db: Executor): Promise<number> {
  const { rows } = await sql<{ at: string }>`SELECT max("timestamp") AS at FROM kysely_migration`.execute(db);
  const DAY = 24 * 3600 * 1000;
  return Math.floor(Date.parse(rows[0]!.at) / DAY) * DAY;
}
