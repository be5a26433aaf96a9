import fc from 'fast-check';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { parseTimestamptz } from '../../src/db/timestamptz.js';
import { createTestDatabase } from '../helpers/db.js';

/** pg's own parser of timestamps (postgres-date): timestamp without time zone keeps it. */
const postgresDate = pg.types.getTypeParser(pg.types.builtins.TIMESTAMP) as (text: string) => Date | number | null;

const testDb = await createTestDatabase();
const database = createDatabase(testDb.url, { max: 1 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = postgresDate(text);
  expect(ours instanceof Date ? ours.getTime() : ours, text).toEqual(theirs instanceof Date ? theirs.getTime() : theirs);
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('parseTimestamptz', () => {
  it('reads every time of the forms Postgres writes as the same instant as postgres-date', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(100, 0, 1), max: Date.UTC(9999, 11, 31) }),
        fc.integer({ min: 0, max: 999_999 }),
        fc.constantFrom('+00', '-05', '+05:30', '+05:45', '-03:30', '+14', '-12', '+01'),
        (ms, micros, offset) => {
          const d = new Date(Math.floor(ms / 1000) * 1000);
          const fraction = micros === 0 ? '' : `.${pad(micros, 6)}`.replace(/0+$/, '');
          const text = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${fraction}${offset}`;
          same(text);
        },
      ),
      { seed: 1184, numRuns: 3000 },
    );
  });

  it('cuts every fraction of a second to the millisecond postgres-date keeps', () => {
    const differ: string[] = [];
    for (let places = 1; places <= 6; places++)
      for (let k = 0; k < 10 ** places; k += places > 4 ? 7 : 1) {
        const text = `2026-11-27 15:14:05.${pad(k, places)}+00`;
        if ((parseTimestamptz(text) as Date).getTime() !== (postgresDate(text) as Date).getTime()) differ.push(text);
      }
    expect(differ).toEqual([]);
  });

  it('leaves the other forms to postgres-date', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '0050-03-01 10:00:00+00',
      '0001-01-01 00:00:00+00 BC',
      '10000-01-01 00:00:00+00',
      '1850-06-01 12:00:00+00:53:28',
      '2026-11-27 15:14:05.1234567+00',
      '2026-11-27 15:14:05.+00',
      '2026-11-27 15:14:05Z',
    ])
      same(text);
  });

  it('is the parser of every timestamptz the pool reads, in whatever zone the session writes', async () => {
    expect(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ)).toBe(parseTimestamptz);
    const client = await database.pool.connect();
    try {
      for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Asia/Kathmandu', 'Europe/Amsterdam']) {
        await client.query(`SET TimeZone = '${zone}'`);
        const { rows } = await client.query<{ at: Date; text: string; ms: string }>(
          `SELECT t AS at, t::text AS text, (extract(epoch FROM t) * 1000)::text AS ms
           FROM unnest(ARRAY['2026-11-27 15:14:05.123456+00', '1970-01-01 00:00:00+00', '2026-03-29 01:30:00.5+00',
                             '1899-12-31 23:59:59.999999+00', '9999-12-31 23:59:59+00']::timestamptz[]) AS t`,
        );
        for (const row of rows) {
          same(row.text);
          expect(row.at.getTime(), `${zone} ${row.text}`).toBe(Math.floor(Number(row.ms)));
        }
      }
    } finally {
      await client.query('RESET TimeZone');
      client.release();
    }
  });
});
