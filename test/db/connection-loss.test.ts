import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, isDatabaseUnavailable } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * What PostgreSQL does to a checked-out connection when it shuts down (fast shutdown, a
 * failover): the backend is terminated with a FATAL that arrives between two statements.
 * pg_terminate_backend does exactly that to one backend.
 */
const testDb = await createTestDatabase();
const database = createDatabase(testDb.url, { max: 2 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

async function terminate(pid: number) {
  const admin = new pg.Client({ connectionString: testDb.url });
  await admin.connect();
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  await admin.end();
}

describe('a connection the server ends', () => {
  it('does not take the process down when it ends between two statements of a transaction, and the pool goes on', async () => {
    const client = await database.pool.connect();
    await client.query('BEGIN');
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const ended = new Promise((resolve) => client.once('end', resolve));
    await terminate(rows[0]!.pid);
    await ended;
    const err = await client.query('SELECT 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    // The route answers 503 for it, and the ingestion writer fails its batch at once.
    expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    client.release(err as Error);
    const after = await database.pool.query<{ one: number }>('SELECT 1 AS one');
    expect(after.rows[0]!.one).toBe(1);
  });

  it('counts a connection cut during its handshake as the database being unavailable', () => {
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Client has encountered a connection error and is not queryable',
    ]) {
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
    }
    // A read replica cancels a read whose rows its replay must remove (DATABASE_REPLICA_URL): a retry reads again.
    const conflict = Object.assign(new Error('canceling statement due to conflict with recovery'), { code: '40001' });
    expect(isDatabaseUnavailable(conflict)).toBe(true);
    expect(isDatabaseUnavailable(new Error('syntax error at or near "SELEC"'))).toBe(false);
  });
});
