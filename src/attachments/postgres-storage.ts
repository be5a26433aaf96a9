import { Readable } from 'node:stream';
import type { Db } from '../db/database.js';
import { type AttachmentStorage, TooLargeError } from './storage.js';

/** The largest row a chunk makes: big enough to keep rows few, small enough to stream. */
export const CHUNK_BYTES = 1024 * 1024;

/**
 * Attachments in PostgreSQL, as rows of at most CHUNK_BYTES (attachment_chunks): nothing else
 * to run, shared by every process, and a read fetches one chunk at a time so memory stays flat
 * whatever the file's size.
 */
export function postgresStorage(db: Db): AttachmentStorage {
  return {
    async put(key, body, { maxBytes }) {
      let size = 0;
      let seq = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        const data = Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await db.insertInto('attachment_chunks').values({ storage_key: key, seq: seq++, data }).execute();
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
        await flush();
        return { size };
      } catch (err) {
        await db.deleteFrom('attachment_chunks').where('storage_key', '=', key).execute();
        throw err;
      }
    },

    async get(key) {
      const first = await db
        .selectFrom('attachment_chunks')
        .select('seq')
        .where('storage_key', '=', key)
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!first) return undefined;
      let seq = first.seq;
      return Readable.from(
        (async function* () {
          for (;;) {
            const row = await db
              .selectFrom('attachment_chunks')
              .select('data')
              .where('storage_key', '=', key)
              .where('seq', '=', seq)
              .executeTakeFirst();
            if (!row) return;
            yield row.data;
            seq++;
          }
        })(),
      );
    },

    async delete(key) {
      await db.deleteFrom('attachment_chunks').where('storage_key', '=', key).execute();
    },
  };
}
