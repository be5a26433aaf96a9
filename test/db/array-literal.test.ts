import { afterAll, describe, expect, it } from 'vitest';
import { type ArrayElement, arrayLiteral } from '../../src/db/array-literal.js';
import { createDatabase } from '../../src/db/database.js';
import { createTestDatabase } from '../helpers/db.js';

const testDb = await createTestDatabase();
const database = createDatabase(testDb.url, { max: 1 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** What Postgres reads from a parameter: pg's own array against the literal, both cast to `type[]`, as text. */
async function bothRead(values: ArrayElement[], type: string) {
  const { rows } = await database.pool.query<{ pg: string | null; literal: string | null }>(
    `SELECT $1::${type}[]::text AS pg, $2::${type}[]::text AS literal`,
    [values, arrayLiteral(values)],
  );
  return rows[0]!;
}

describe('arrayLiteral', () => {
  it('reads in Postgres as pg’s own array parameter does, whatever the text holds', async () => {
    const texts = [
      '',
      'plain',
      'a "quoted" word',
      'back\\slash\\',
      '\\"',
      'NULL',
      null,
      'ünïcødé 🙂',
      ' spaced ',
      '{braces,comma}',
      'line\nbreak',
    ];
    const read = await bothRead(texts, 'text');
    expect(read.literal).toBe(read.pg);
    expect((await database.pool.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [arrayLiteral(texts)])).rows[0]!.v).toEqual(
      texts,
    );
  });

  it('text only, without a null, one element or many, as pg’s own array parameter', async () => {
    for (const texts of [['plain'], [''], ['a "quoted" word', 'back\\slash\\', '', 'NULL', '{braces,comma}'], ['x', 'y']]) {
      const read = await bothRead(texts, 'text');
      expect(read.literal, JSON.stringify(texts)).toBe(read.pg);
      expect(arrayLiteral(texts)).toBe(`{${texts.map((t) => `"${t.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`);
    }
  });

  it('numbers, booleans and empty arrays as pg sends them', async () => {
    for (const [values, type] of [
      [[1, -2, 2 ** 40, null, 0], 'bigint'],
      [[1, null, 3], 'int'],
      [[true, false, null], 'bool'],
      [[], 'int'],
      [[1.5, -0.25], 'float8'],
    ] as [ArrayElement[], string][]) {
      const read = await bothRead(values, type);
      expect(read.literal, `${type} ${JSON.stringify(values)}`).toBe(read.pg);
    }
  });

  it('times as the same instants, in the years 0–9999 and outside them', async () => {
    const times = [
      new Date('2026-11-27T12:05:19.123Z'),
      new Date('1970-01-01T00:00:00Z'),
      new Date('0001-01-01T00:00:00Z'),
      new Date('9999-12-31T23:59:59.999Z'),
      new Date(Date.UTC(20000, 0, 1)),
      null,
    ];
    const read = await bothRead(times, 'timestamptz');
    expect(read.literal).toBe(read.pg);
    // A numeric offset, as pg writes a Date from a process in UTC: no zone abbreviation to look up.
    expect(arrayLiteral([times[0]])).toBe('{"2026-11-27T12:05:19.123+00:00"}');
  });
});
