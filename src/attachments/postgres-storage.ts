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

/** Slices a read has in flight ahead of its consumer: PostgreSQL encodes one while this process decodes another. */
const READ_AHEAD = 2;

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
 * from the source, and a read has READ_AHEAD slices in flight while the last is consumed. So a
 * transfer holds at most two chunks (writing) or a few slices (reading) in this process, and a
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
      // Every chunk but the last is exactly CHUNK_BYTES (put writes them so), and a chunk is a
      // whole number of slices, so slice i is at a known chunk and offset: READ_AHEAD of them
      // are fetched at once, on as many connections, ahead of the consumer. A slice shorter
      // than READ_BYTES, empty or missing is past the end.
      const slice = (i: number) =>
        readChunkSlice(db, key, Math.floor((i * READ_BYTES) / CHUNK_BYTES), (i * READ_BYTES) % CHUNK_BYTES, READ_BYTES);
      const first = await slice(0);
      if (first === undefined) return undefined;
      const queue: Promise<{ data: Buffer } | undefined>[] = [Promise.resolve(first)];
      let requested = 1;
      let ended = false;
      const fill = () => {
        while (!ended && queue.length < READ_AHEAD) queue.push(settleLater(slice(requested++)));
      };
      fill();
      return new Readable({
        highWaterMark: READ_BYTES,
        read() {
          const current = queue.shift()!;
          current.then(
            (got) => {
              const data = got?.data;
              if (data === undefined || data.byteLength === 0) {
                ended = true;
                this.push(null);
                return;
              }
              if (data.byteLength < READ_BYTES) {
                ended = true;
                this.push(data);
                this.push(null);
                return;
              }
              fill();
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
