import type { Db } from '../db/database.js';
import { chunkKeysAfter, deleteChunks } from './chunks.queries.js';
import { postgresStorage } from './postgres-storage.js';
import type { AttachmentStorage } from './storage.js';

export interface MoveResult {
  /** Keys whose bytes were copied to the target and then removed from PostgreSQL by this run. */
  moved: number;
  bytes: number;
}

/**
 * Moves every attachment's bytes from PostgreSQL (attachment_chunks) to `target` (the s3
 * store), key by key: copy, then delete the chunks. A key keeps its name, so rows need no
 * change, and the s3 store reads PostgreSQL for a key it does not have yet (storage-factory.ts):
 * the service may run with INBOX_STORAGE=s3 throughout. Stopped at any point (a crash, S3
 * down), a second run starts over from what is still in PostgreSQL; a key copied but not yet
 * deleted is copied again, which overwrites the same bytes. Nothing is removed before its copy
 * is complete.
 */
export async function moveStorageToS3(
  db: Db,
  target: AttachmentStorage,
  options: { batch?: number; onMoved?: (key: string, size: number) => void } = {},
): Promise<MoveResult> {
  const source = postgresStorage(db);
  const result: MoveResult = { moved: 0, bytes: 0 };
  let after = '';
  for (;;) {
    const keys = await chunkKeysAfter(db, after, options.batch ?? 100);
    if (keys.length === 0) return result;
    for (const key of keys) {
      after = key;
      const stream = await source.get(key);
      if (stream === undefined) continue; // deleted by the service meanwhile
      const { size } = await target.put(key, stream, { maxBytes: Number.MAX_SAFE_INTEGER });
      await deleteChunks(db, key);
      result.moved++;
      result.bytes += size;
      options.onMoved?.(key, size);
    }
  }
}
