import { randomBytes } from 'node:crypto';
import { type Kysely, type Migration, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { runMigrations } from '../../src/db/migrate.js';
import { withDatabaseName } from '../helpers/names.js';

// An empty database of this file's own: the migrations here are the test's, not the service's.
const adminUrl = inject('pgAdminUrl');
const name = `inbox_t_${randomBytes(6).toString('hex')}`;
let database: Database;
let other: pg.Client;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  database = createDatabase(withDatabaseName(adminUrl, name), { max: 1, statementTimeoutMillis: 0 });
  await sql`CREATE TABLE first_table (n int); CREATE TABLE second_table (n int)`.execute(database.db);
  other = new pg.Client({ connectionString: withDatabaseName(adminUrl, name) });
  await other.connect();
});

afterAll(async () => {
  await other?.end();
  await database?.close();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/** Whether a backend other than `pid` holds `table` in ACCESS EXCLUSIVE mode. */
async function heldByAnother(pid: number, table: string): Promise<boolean> {
  const { rows } = await other.query(
    `SELECT 1 FROM pg_locks WHERE relation = $1::regclass AND mode = 'AccessExclusiveLock' AND granted AND pid <> $2`,
    [table, pid],
  );
  return rows.length > 0;
}

describe('runMigrations', () => {
  it('runs again, whole, a run that a deadlock with another process rolled back', async () => {
    // A process of the older version holds the second table (its batch's writes) and then
    // wants the first, which the migration altered: one of the two is aborted. This backend's
    // deadlock_timeout is long, so the migration's (the default second) finds the cycle first
    // and is the one aborted.
    const otherPid = (await other.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    await other.query(`BEGIN; SET LOCAL deadlock_timeout = '60s'; LOCK TABLE second_table IN ROW EXCLUSIVE MODE`);
    let runs = 0;
    const migrations: Record<string, Migration> = {
      '0001_alter_both': {
        async up(db: Kysely<unknown>) {
          runs += 1;
          await sql`ALTER TABLE first_table ADD COLUMN note text`.execute(db);
          await sql`ALTER TABLE second_table ADD COLUMN note text`.execute(db);
        },
      },
    };
    const migrating = runMigrations(database.db, migrations);

    // Once the migration holds the first table (and waits for the second), the other process
    // asks for the first: a deadlock. When the migration's run is aborted, its lock goes and
    // the other process gets the table; it commits, and the run tried again goes through.
    while (!(await heldByAnother(otherPid, 'first_table'))) await new Promise((r) => setTimeout(r, 20));
    await other.query('LOCK TABLE first_table IN ROW EXCLUSIVE MODE');
    await other.query('COMMIT');

    expect(await migrating).toEqual(['0001_alter_both']);
    expect(runs).toBe(2);
    const { rows } = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns WHERE column_name = 'note' ORDER BY table_name`.execute(database.db);
    expect(rows.map((r) => r.table_name)).toEqual(['first_table', 'second_table']);
  });
});
