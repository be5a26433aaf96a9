import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { type PackedTexts, packedParams, unpacked, withPackedTexts } from '../../src/db/packed-texts.js';
import { createTestDatabase } from '../helpers/db.js';

const testDb = await createTestDatabase();
const database = createDatabase(testDb.url, { max: 4 });
afterAll(async () => {
  await database.close();
  await testDb.drop();
});

/** What PostgreSQL reads back of packed texts, in order, and what was packed. */
async function readBack(texts: string[]): Promise<{ read: string[]; packed: PackedTexts }> {
  return withPackedTexts(texts, async (packed) => {
    const { bytes, starts, lengths } = packedParams(packed);
    const { rows } = await sql<{ t: string }>`
      SELECT ${unpacked(bytes, 's', 'l')} AS t FROM unnest(${starts}, ${lengths}) WITH ORDINALITY AS v(s, l, n) ORDER BY n`.execute(
      database.db,
    );
    return { read: rows.map((r) => r.t), packed: { ...packed, bytes: Buffer.from(packed.bytes) } };
  });
}

describe('withPackedTexts', () => {
  it('counts bytes, not characters: multi-byte, empty, quoted and escaped texts read back exactly', async () => {
    const texts = ['', 'plain', 'ünïcødé 🙂', '{"json":"with \\"quotes\\" and \\\\"}', '', 'line\nbreak\ttab', '€'.repeat(3000), 'x'];
    const { read, packed } = await readBack(texts);
    expect(packed.lengths).toEqual(texts.map((t) => Buffer.byteLength(t)));
    expect(packed.starts[0]).toBe(1); // substring counts from 1
    expect(packed.bytes.length).toBe(Buffer.byteLength(texts.join('')));
    expect(read).toEqual(texts);
  });

  it('reads back any texts PostgreSQL can hold, in their order (property, seeded)', async () => {
    const noNul = fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replaceAll('\0', ''));
    await fc.assert(
      fc.asyncProperty(fc.array(noNul, { minLength: 1, maxLength: 20 }), async (texts) => {
        expect((await readBack(texts)).read).toEqual(texts);
      }),
      { seed: 20261127, numRuns: 60 },
    );
  });

  it('statements in flight at once each send their own texts, the buffers kept between them reused', async () => {
    const batches = Array.from({ length: 12 }, (_, b) =>
      Array.from({ length: 50 + b * 40 }, (_, i) => `batch ${b} text ${i} ${'é'.repeat(b * 30)}`),
    );
    for (let round = 0; round < 3; round++) {
      const read = await Promise.all(batches.map((texts) => readBack(texts)));
      for (const [b, r] of read.entries()) expect(r.read, `batch ${b}`).toEqual(batches[b]);
    }
  });
});
