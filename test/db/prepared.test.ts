import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, PREPARED } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/db.js';

const testDb = await createTestDatabase();
// One connection: every statement below runs on the same backend.
const database = createDatabase(testDb.url, { max: 1 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

const preparedOnConnection = async () =>
  (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY statement`.execute(database.db)).rows.map(
    (r) => r.statement,
  );

describe('statements marked PREPARED', () => {
  it('are prepared once per connection and bound with their values after; others are not', async () => {
    const one = (n: number) => sql<{ n: number }>`${PREPARED} SELECT ${n}::int + 1 AS n`.execute(database.db);
    expect((await one(1)).rows[0]!.n).toBe(2);
    expect((await one(41)).rows[0]!.n).toBe(42);
    await database.db.transaction().execute(async (trx) => {
      expect((await sql<{ n: number }>`${PREPARED} SELECT ${5}::int + 1 AS n`.execute(trx)).rows[0]!.n).toBe(6);
    });
    await sql`SELECT ${1}::int AS plain`.execute(database.db);
    const prepared = await preparedOnConnection();
    expect(prepared).toHaveLength(1);
    expect(prepared[0]).toContain('SELECT $1::int + 1 AS n');
  });
});
