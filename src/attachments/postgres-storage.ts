import { Readable } from 'node:stream';
import type { Db } from '../db/database.js';
import { deleteChunks, insertChunk, readChunkSlice } from './chunks.queries.js';
import { type AttachmentStorage, TooLargeError } from './storage.js';

/** The largest row a chunk makes: big enough to keep rows few, small enough to stream. */
export const CHUNK_BYTES = 1024 * 1024;

/**
 * What one read fetches. Smaller than a chunk because the driver receives bytea as hex text
 * and its receive buffer grows to twice the largest answer and stays so until the connection
 * next receives: 256 KB keeps that at 1 MB per pooled connection instead of 4 MB.
 */
export const READ_BYTES = 256 * 1024;

/** Marks a promise handled now and keeps it to await later: a failure surfaces where it is awaited. */
const settleLater = <T>(p: Promise<T>): Promise<T> => {
  p.catch(() => {});
  return p;
};

/**
 * Attachments in PostgreSQL, as rows of at most CHUNK_BYTES (attachment_chunks): nothing else
 * to run, shared by every process, and memory stays flat whatever the file's size.
 *
 * Speed comes from overlap: a write inserts chunk n (one round trip) while chunk n+1 is read
 * from the source, and a read fetches the next READ_BYTES while the last are consumed. So a
 * transfer holds at most two chunks (writing) or two slices (reading) in this process, and a
 * slow consumer stops the fetching (the stream's high-water mark is one slice).
 */
export function postgresStorage(db: Db): AttachmentStorage {
  return {
    async put(key, body, { maxBytes }) {
      let size = 0;
      let seq = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let inserting: Promise<void> = Promise.resolve();
      const flush = async () => {
        const data = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await inserting;
        inserting = settleLater(insertChunk(db, key, seq++, data));
      };
      try {
        for await (const piece of body) {
          size += piece.byteLength;
          if (size > maxBytes) throw new TooLargeError(maxBytes);
          let buf = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
          while (buf.byteLength > 0) {
            const take = Math.min(buf.byteLength, CHUNK_BYTES - pendingBytes);
            pending.push(buf.subarray(0, take));
            pendingBytes += take;
            buf = buf.subarray(take);
            if (pendingBytes === CHUNK_BYTES) await flush();
          }
        }
        // The last, short chunk; an empty file is one empty chunk, so it reads back as 0 bytes.
        if (pendingBytes > 0 || seq === 0) await flush();
        await inserting;
        return { size };
      } catch (err) {
        await inserting.catch(() => {});
        await deleteChunks(db, key);
        throw err;
      }
    },

    async get(key) {
      // Where the next slice starts, advanced when a slice is fetched, not when it is consumed.
      let seq = 0;
      let offset = 0;
      const fetchNext = async (): Promise<Buffer | undefined> => {
        const slice = await readChunkSlice(db, key, seq, offset, READ_BYTES);
        if (slice === undefined) return undefined;
        offset += slice.data.byteLength;
        if (offset >= slice.chunkSize) {
          seq++;
          offset = 0;
        }
        return slice.data;
      };
      const first = await fetchNext();
      if (first === undefined) return undefined;
      let next: Promise<Buffer | undefined> | undefined = Promise.resolve(first);
      return new Readable({
        highWaterMark: READ_BYTES,
        read() {
          const current = next ?? settleLater(fetchNext());
          next = undefined;
          current.then(
            (data) => {
              if (data === undefined) {
                this.push(null);
                return;
              }
              next = settleLater(fetchNext());
              this.push(data);
            },
            (err: Error) => this.destroy(err),
          );
        },
      });
    },

    async delete(key) {
      await deleteChunks(db, key);
    },
  };
}
