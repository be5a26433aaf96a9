import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES, postgresStorage } from '../../src/attachments/postgres-storage.js';
import { TooLargeError } from '../../src/attachments/storage.js';
import { createDatabase } from '../../src/db/database.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();

async function* pieces(bytes: Buffer, size: number) {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

async function readAll(stream: AsyncIterable<Uint8Array>) {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

describe('postgres attachment storage', () => {
  it('keeps the bytes in chunks of at most 1 MB and streams them back whole', async () => {
    const store = postgresStorage(ctx.deps.db);
    const bytes = randomBytes(2 * CHUNK_BYTES + 12_345);
    expect(await store.put('k-whole', pieces(bytes, 64 * 1024 + 7), { maxBytes: 10 * CHUNK_BYTES })).toEqual({ size: bytes.byteLength });
    const rows = await ctx.deps.db
      .selectFrom('attachment_chunks')
      .select(['seq'])
      .select((eb) => eb.fn('octet_length', ['data']).as('n'))
      .where('storage_key', '=', 'k-whole')
      .orderBy('seq')
      .execute();
    expect(rows.map((r) => Number(r.n))).toEqual([CHUNK_BYTES, CHUNK_BYTES, 12_345]);
    expect((await readAll((await store.get('k-whole'))!)).equals(bytes)).toBe(true);
  });

  it('stops a write above the limit at once and keeps nothing of it', async () => {
    const store = postgresStorage(ctx.deps.db);
    let read = 0;
    async function* endless() {
      for (;;) {
        read += 256 * 1024;
        yield Buffer.alloc(256 * 1024, 1);
      }
    }
    await expect(store.put('k-big', endless(), { maxBytes: CHUNK_BYTES + 1 })).rejects.toBeInstanceOf(TooLargeError);
    expect(read).toBeLessThanOrEqual(CHUNK_BYTES + 256 * 1024 + 1);
    expect(await store.get('k-big')).toBeUndefined();
  });

  it('deletes, and reads nothing for an unknown key', async () => {
    const store = postgresStorage(ctx.deps.db);
    await store.put('k-gone', pieces(Buffer.from('hello'), 2), { maxBytes: 100 });
    await store.delete('k-gone');
    expect(await store.get('k-gone')).toBeUndefined();
    await store.delete('k-never');
  });

  it('relaxes synchronous_commit for the commit of a chunk only, never for the session after it', async () => {
    // One connection, so the statement after the write runs in the very session that wrote.
    const one = createDatabase(ctx.database.url, { max: 1 });
    try {
      const setting = async () => (await sql<{ s: string }>`SELECT current_setting('synchronous_commit') AS s`.execute(one.db)).rows[0]!.s;
      // The test cluster runs with it off for speed; the service's sessions have it on.
      await sql`SET synchronous_commit = on`.execute(one.db);
      expect(await setting()).toBe('on');
      await postgresStorage(one.db).put('k-sync', pieces(Buffer.alloc(CHUNK_BYTES + 1, 3), 4096), { maxBytes: 2 * CHUNK_BYTES });
      expect(await setting()).toBe('on');
    } finally {
      await one.close();
    }
  });

  it('keeps chunks uncompressed, so a file that compresses still reads by slices', async () => {
    const store = postgresStorage(ctx.deps.db);
    const text = Buffer.alloc(CHUNK_BYTES, 'the same line of text, over and over\n');
    await store.put('k-text', pieces(text, 64 * 1024), { maxBytes: 2 * CHUNK_BYTES });
    const row = await sql<{ stored: number }>`
      SELECT pg_column_size(data) AS stored FROM attachment_chunks WHERE storage_key = 'k-text' AND seq = 0
    `.execute(ctx.deps.db);
    expect(Number(row.rows[0]!.stored)).toBeGreaterThanOrEqual(CHUNK_BYTES);
    expect((await readAll((await store.get('k-text'))!)).equals(text)).toBe(true);
  });
});
