import type { Readable } from 'node:stream';

/** The bytes did not fit `maxBytes`: the write stopped there and nothing was kept. */
export class TooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`too large: more than ${maxBytes} bytes`);
    this.name = 'TooLargeError';
  }
}

/**
 * The store could not be reached or refused the write (S3 down, a bucket missing): the caller
 * answers 503 and keeps no row that points at bytes that were never written.
 */
export class StorageUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/**
 * Where attachments' bytes live (docs/attachments.md, "Storage"): `postgres` (chunks in the
 * database, the default) or `s3`. Both stream: a write reads its source as it arrives and a
 * read hands out a stream, so a file of any allowed size passes with flat memory.
 */
export interface AttachmentStorage {
  /**
   * Writes the bytes of `body` under `key` and answers their size. More than `maxBytes` stops
   * the write at once with TooLargeError and removes what was written.
   */
  put(key: string, body: AsyncIterable<Uint8Array>, options: { maxBytes: number }): Promise<{ size: number }>;
  /** The bytes under `key`, streamed; undefined when there are none. */
  get(key: string): Promise<Readable | undefined>;
  /** Removes the bytes under `key`; nothing there is not an error. */
  delete(key: string): Promise<void>;
}
