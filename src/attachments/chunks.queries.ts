import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

// attachment_chunks: the bytes of the `postgres` store, one row per ≤ 1 MB chunk of a key,
// numbered from 0 (a file of 0 bytes is one empty chunk, so it still exists).

/**
 * One chunk, committed without waiting for its WAL flush (synchronous_commit off for this
 * statement's own transaction only): a file of 25 chunks is then not 25 disk flushes. Safe
 * because nothing points at the chunks until the attachment row is written, and that
 * commit is synchronous and flushes the WAL up to itself, the chunks' records included.
 */
export async function insertChunk(db: Executor, storageKey: string, seq: number, data: Buffer): Promise<void> {
  await sql`
    WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
    INSERT INTO attachment_chunks (storage_key, seq, data)
    SELECT ${storageKey}, ${seq}, ${data} FROM relaxed
  `.execute(db);
}

/**
 * `length` bytes of chunk `seq` from `offset`, with the chunk's whole size; undefined past the
 * last chunk (or for a key with no chunks). PostgreSQL reads only the TOAST pages the slice
 * needs, and a small answer keeps the driver's receive buffer small.
 */
export async function readChunkSlice(
  db: Executor,
  storageKey: string,
  seq: number,
  offset: number,
  length: number,
): Promise<{ data: Buffer; chunkSize: number } | undefined> {
  const row = await db
    .selectFrom('attachment_chunks')
    .select([sql<Buffer>`substring(data from ${offset + 1} for ${length})`.as('data'), sql<number>`octet_length(data)`.as('chunkSize')])
    .where('storage_key', '=', storageKey)
    .where('seq', '=', seq)
    .executeTakeFirst();
  return row;
}

export async function deleteChunks(db: Executor, storageKey: string): Promise<void> {
  await db.deleteFrom('attachment_chunks').where('storage_key', '=', storageKey).execute();
}

/** Up to `limit` keys that have chunks, in key order after `after`: a resumable walk over the store. */
export async function chunkKeysAfter(db: Executor, after: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('attachment_chunks')
    .select('storage_key')
    .where('seq', '=', 0)
    .where('storage_key', '>', after)
    .orderBy('storage_key')
    .limit(limit)
    .execute();
  return rows.map((r) => r.storage_key);
}
