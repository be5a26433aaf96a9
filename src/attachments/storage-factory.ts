import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { postgresStorage } from './postgres-storage.js';
import type { AttachmentStorage } from './storage.js';

/**
 * The storage INBOX_STORAGE names, built once at start. The S3 store (and the AWS SDK under
 * it, about 25 MB of every process's memory) is loaded only when it is the one named.
 */
export async function createStorage(config: Config, db: Db): Promise<AttachmentStorage> {
  if (config.storage === 'postgres') return postgresStorage(db);
  const { s3OptionsFrom, s3Storage } = await import('./s3-storage.js');
  return withPostgresFallback(s3Storage(s3OptionsFrom(config)), postgresStorage(db));
}

/**
 * The s3 store over what is still in PostgreSQL: writes go to S3; a key S3 does not have is
 * read from attachment_chunks, and a delete removes both. So a deployment switches to
 * INBOX_STORAGE=s3 first and moves the old bytes afterwards (`inbox attachments move-storage
 * --to s3`) without a moment where an attachment cannot be read. Once nothing is left in
 * PostgreSQL the fallback costs a lookup only for keys that exist nowhere.
 */
export function withPostgresFallback(s3: AttachmentStorage, postgres: AttachmentStorage): AttachmentStorage {
  return {
    put: (key, body, options) => s3.put(key, body, options),
    async get(key) {
      return (await s3.get(key)) ?? (await postgres.get(key));
    },
    async delete(key) {
      await s3.delete(key);
      await postgres.delete(key);
    },
  };
}
