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

export function packTexts(texts: readonly string[]): PackedTexts {
  const n = texts.length;
  const lengths = new Array<number>(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const length = Buffer.byteLength(texts[i]!, 'utf8');
    lengths[i] = length;
    total += length;
  }
  const bytes = Buffer.allocUnsafe(total);
  const starts = new Array<number>(n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    bytes.write(texts[i]!, at, lengths[i]!, 'utf8');
    starts[i] = at + 1;
    at += lengths[i]!;
  }
  return { bytes, starts, lengths };
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
