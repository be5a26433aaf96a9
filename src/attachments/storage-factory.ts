import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { postgresStorage } from './postgres-storage.js';
import { s3OptionsFrom, s3Storage } from './s3-storage.js';
import type { AttachmentStorage } from './storage.js';

/** The storage INBOX_STORAGE names, built once at start. */
export function createStorage(config: Config, db: Db): AttachmentStorage {
  if (config.storage === 'postgres') return postgresStorage(db);
  return s3Storage(s3OptionsFrom(config));
}
