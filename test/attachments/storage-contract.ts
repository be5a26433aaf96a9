// The one storage suite: every AttachmentStorage (postgres, s3) runs these same cases, so the
// routes and jobs can rely on one behaviour whatever INBOX_STORAGE says.
import { createHash, randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type AttachmentStorage, TooLargeError } from '../../src/attachments/storage.js';

const MB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
/** A full collection, so a memory sample counts what is held, not garbage not yet collected. */
const collect = vm.runInNewContext('gc') as () => void;
/** Bytes of Buffers and ArrayBuffers alive now (after a collection). */
const liveBuffers = () => {
  collect();
  return process.memoryUsage().arrayBuffers;
};

/** `bytes` in pieces of `size` (an odd size, so pieces straddle every chunk and part boundary). */
export async function* pieces(bytes: Buffer, size = 64 * 1024 + 7): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

export async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

let keys = 0;
const key = (what: string) => `contract-${what}-${process.pid}-${++keys}-${randomBytes(4).toString('hex')}`;

/**
 * `heldBytes`: what the store may keep of one transfer at once (its chunks or parts in flight,
 * with room for the HTTP client's own buffers): well under the 25 MB the streaming case moves.
 */
export function storageContract(name: string, store: () => AttachmentStorage, { heldBytes }: { heldBytes: number }): void {
  describe(`${name} storage: the shared contract`, () => {
    it.each([
      ['0 B', 0],
      ['1 B', 1],
      ['exactly 1 MB', MB],
      ['1 MB + 1', MB + 1],
      ['about 12 MB', 12 * MB + 12_345],
    ])('round-trips %s of random bytes', async (_label, size) => {
      const k = key('round');
      const bytes = randomBytes(size);
      expect(await store().put(k, pieces(bytes), { maxBytes: 25 * MB })).toEqual({ size });
      const stream = await store().get(k);
      expect(stream).toBeDefined();
      const back = await readAll(stream!);
      expect(back.byteLength).toBe(size);
      expect(back.equals(bytes)).toBe(true);
    });

    it('takes exactly maxBytes, and one byte more is TooLargeError with nothing kept', async () => {
      const fits = key('fits');
      const bytes = randomBytes(MB + 3);
      expect(await store().put(fits, pieces(bytes), { maxBytes: bytes.byteLength })).toEqual({ size: bytes.byteLength });
      expect((await readAll((await store().get(fits))!)).equals(bytes)).toBe(true);

      const over = key('over');
      const error = await store()
        .put(over, pieces(Buffer.concat([bytes, Buffer.from([7])])), { maxBytes: bytes.byteLength })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TooLargeError);
      expect((error as TooLargeError).maxBytes).toBe(bytes.byteLength);
      expect(await store().get(over)).toBeUndefined();
    });

    it('stops reading an endless source at the limit, not after it', async () => {
      const k = key('endless');
      let read = 0;
      let finished = false;
      async function* endless() {
        try {
          for (;;) {
            read += 256 * 1024;
            yield randomBytes(256 * 1024);
          }
        } finally {
          finished = true;
        }
      }
      await expect(store().put(k, endless(), { maxBytes: 9 * MB })).rejects.toBeInstanceOf(TooLargeError);
      expect(read).toBeLessThanOrEqual(9 * MB + 256 * 1024);
      // The source was closed, so a request body behind it is released at once.
      expect(finished).toBe(true);
      expect(await store().get(k)).toBeUndefined();
    });

    it('reads undefined for a key never written', async () => {
      expect(await store().get(key('never'))).toBeUndefined();
    });

    it('deletes, and deleting again or deleting nothing is not an error', async () => {
      const k = key('gone');
      await store().put(k, pieces(randomBytes(MB + 10)), { maxBytes: 2 * MB });
      await store().delete(k);
      expect(await store().get(k)).toBeUndefined();
      await store().delete(k);
      await store().delete(key('never'));
    });

    it('keeps keys apart', async () => {
      const [a, b] = [key('a'), key('b')];
      await store().put(a, pieces(Buffer.from('first')), { maxBytes: 100 });
      await store().put(b, pieces(Buffer.from('second')), { maxBytes: 100 });
      await store().delete(a);
      expect((await readAll((await store().get(b))!)).toString()).toBe('second');
    });

    // Fifty full collections: on a loaded machine they alone can pass the default 30 s.
    it('streams 25 MB in and out without ever holding it whole', { timeout: 120_000 }, async () => {
      const k = key('stream');
      const total = 25 * MB;
      // Live Buffer bytes above the start, sampled every MB moved. The median is the store's
      // working set; the peak may also catch the test runner's own passing buffers, so it is
      // held only to "never the whole file".
      const samples = { write: [] as number[], read: [] as number[] };
      const hashIn = createHash('sha256');
      const before = liveBuffers();
      async function* source() {
        // Fresh bytes every piece, so a store that kept the pieces would show them as live.
        for (let sent = 0, n = 0; sent < total; n++) {
          const piece = randomBytes(Math.min(64 * 1024, total - sent));
          sent += piece.byteLength;
          hashIn.update(piece);
          if (n % 16 === 15) samples.write.push(liveBuffers() - before);
          yield piece;
        }
      }
      expect(await store().put(k, source(), { maxBytes: total })).toEqual({ size: total });

      let sinceSample = 0;
      const hashOut = createHash('sha256');
      const readBefore = liveBuffers();
      for await (const part of (await store().get(k))!) {
        hashOut.update(part);
        sinceSample += part.byteLength;
        if (sinceSample >= MB) {
          sinceSample = 0;
          samples.read.push(liveBuffers() - readBefore);
        }
      }
      expect(hashOut.digest('hex')).toBe(hashIn.digest('hex'));
      await store().delete(k);

      const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
      for (const [what, taken] of Object.entries(samples)) {
        const sorted = [...taken].sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)]!;
        const peak = sorted[sorted.length - 1]!;
        process.stderr.write(`${name} storage, 25 MB ${what}: median ${mb(median)} held, peak ${mb(peak)}\n`);
        expect(sorted.length).toBeGreaterThanOrEqual(20);
        expect(heldBytes).toBeLessThan(total);
        expect(median).toBeLessThan(heldBytes);
        expect(peak).toBeLessThan(total);
      }
    });
  });
}
