import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { packedParams, packTexts, unpacked } from '../../src/db/packed-texts.js';
import { createTestDatabase } from '../helpers/db.js';

const testDb = await createTestDatabase();
const database = createDatabase(testDb.url, { max: 1 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** What PostgreSQL reads back of packed texts, in order. */
async function readBack(texts: string[]): Promise<string[]> {
  const { bytes, starts, lengths } = packedParams(packTexts(texts));
  const { rows } = await sql<{ t: string }>`
    SELECT ${unpacked(bytes, 's', 'l')} AS t FROM unnest(${starts}, ${lengths}) WITH ORDINALITY AS v(s, l, n) ORDER BY n`.execute(
    database.db,
  );
  return rows.map((r) => r.t);
}

describe('packTexts', () => {
  it('counts bytes, not characters: multi-byte, empty, quoted and escaped texts read back exactly', async () => {
    const texts = ['', 'plain', 'ünïcødé 🙂', '{"json":"with \\"quotes\\" and \\\\"}', '', 'line\nbreak\ttab', '€'.repeat(3000), 'x'];
    const packed = packTexts(texts);
    expect(packed.lengths).toEqual(texts.map((t) => Buffer.byteLength(t)));
    expect(packed.starts[0]).toBe(1); // substring counts from 1
    expect(await readBack(texts)).toEqual(texts);
  });

  it('reads back any texts PostgreSQL can hold, in their order (property, seeded)', async () => {
    const noNul = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replaceAll('\0', ''));
    await fc.assert(
      fc.asyncProperty(fc.array(noNul, { minLength: 1, maxLength: 20 }), async (texts) => {
        expect(await readBack(texts)).toEqual(texts);
      }),
      { seed: 20261127, numRuns: 60 },
    );
  });
});
