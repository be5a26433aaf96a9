import { type RawBuilder, sql } from 'kysely';
import { arrayLiteral } from './array-literal.js';

/**
 * Texts a batch statement writes (delivery bodies, event bodies, NOTIFY payloads), sent as
 * one binary `bytea` parameter, their UTF-8 back to back, with where each one starts (from 1,
 * as `substring` counts) and how many bytes it has. As elements of a text[] or a JSON array,
 * every quote of every text is escaped in JavaScript and unescaped again by PostgreSQL's
 * array or JSON parser, character by character; a slice of a bytea is copied as it is
 * (docs/performance.md, "Texts as one binary parameter"). The texts must hold no NUL, which
 * PostgreSQL's text refuses anyway: a text decoded from bytes, or storableText of it.
 */
export interface PackedTexts {
  bytes: Buffer;
  starts: number[];
  lengths: number[];
}

/**
 * Packing buffers kept for the next batch. A batch's texts are hundreds of kilobytes, and a
 * buffer that size malloc'd and freed for every statement grew the worker's resident memory
 * by a twentieth (docs/performance.md, "Texts as one binary parameter"); a few kept buffers
 * serve the batches in flight. pg copies a parameter into its own message when it sends the
 * statement, so a buffer is free again once its statement has answered.
 */
const spare: Buffer[] = [];
const SPARE_COUNT = 4;
/** A larger buffer is not kept: a batch that size is rare and its memory goes back. */
const SPARE_MAX_BYTES = 4 * 1024 * 1024;

function takeBuffer(size: number): Buffer {
  for (let i = spare.length - 1; i >= 0; i--) if (spare[i]!.length >= size) return spare.splice(i, 1)[0]!;
  // Rounded up to a power of two (at least 64 KB), so a slightly larger batch fits next time.
  return Buffer.allocUnsafeSlow(Math.max(64 * 1024, 2 ** Math.ceil(Math.log2(Math.max(size, 1)))));
}

function giveBack(buffer: Buffer): void {
  if (buffer.length > SPARE_MAX_BYTES) return;
  if (spare.length < SPARE_COUNT) {
    spare.push(buffer);
    return;
  }
  // Full: keep the larger of it and the smallest kept.
  let smallest = 0;
  for (let i = 1; i < spare.length; i++) if (spare[i]!.length < spare[smallest]!.length) smallest = i;
  if (spare[smallest]!.length < buffer.length) spare[smallest] = buffer;
}

/**
 * Packs `texts` and runs `use` with them; the bytes must not be used once `use` has settled
 * (they go back to be reused). `use` runs the statement that sends them.
 */
export async function withPackedTexts<T>(texts: readonly string[], use: (packed: PackedTexts) => Promise<T>): Promise<T> {
  const n = texts.length;
  const lengths = new Array<number>(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const length = Buffer.byteLength(texts[i]!, 'utf8');
    lengths[i] = length;
    total += length;
  }
  const buffer = takeBuffer(total);
  const starts = new Array<number>(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    buffer.write(texts[i]!, at, lengths[i]!, 'utf8');
    starts[i] = at + 1;
    at += lengths[i]!;
  }
  try {
    return await use({ bytes: buffer.subarray(0, total), starts, lengths });
  } finally {
    giveBack(buffer);
  }
}

/**
 * The three parameters of packed texts in a statement: the bytes (a Buffer goes to
 * PostgreSQL as a binary value), and the starts and lengths as int[] for an `unnest`.
 */
export function packedParams(packed: PackedTexts): {
  bytes: RawBuilder<unknown>;
  starts: RawBuilder<unknown>;
  lengths: RawBuilder<unknown>;
} {
  return {
    bytes: sql`${packed.bytes}::bytea`,
    starts: sql`${arrayLiteral(packed.starts)}::int[]`,
    lengths: sql`${arrayLiteral(packed.lengths)}::int[]`,
  };
}

/** The SQL of one packed text: the slice of `bytes` at `start` of `length` bytes, as text. */
export function unpacked(bytes: RawBuilder<unknown>, start: string, length: string): RawBuilder<unknown> {
  return sql`convert_from(substring(${bytes} FROM ${sql.ref(start)} FOR ${sql.ref(length)}), 'UTF8')`;
}
