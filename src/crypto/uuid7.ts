import { randomFillSync } from 'node:crypto';

/** The random bytes of IDS_PER_DRAW ids, drawn from the system's generator at once. */
const IDS_PER_DRAW = 128;
const RANDOM_BYTES_PER_ID = 10;
const random = Buffer.alloc(IDS_PER_DRAW * RANDOM_BYTES_PER_ID);
let drawn = IDS_PER_DRAW;

/** The characters of the id being made; the time part's stay from one id to the next of its millisecond. */
const text = Buffer.alloc(36);
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids made in
 * time order land at the right edge of the primary-key index instead of on random pages,
 * which keeps inserts cheap as the table grows; the random part keeps them unguessable.
 * The random bits (74: twelve after the version, two after the variant's `10`, sixty) are
 * drawn for IDS_PER_DRAW ids at a time (a call to randomBytes per id costs a system call on
 * the hot path), and the id's text is written as bytes and read once: randomUUID's own text
 * cut and pasted again made some twenty strings per id.
 */
export function uuid7(now = Date.now()): string {
  writeTimePart(now);
  if (drawn === IDS_PER_DRAW) {
    randomFillSync(random);
    drawn = 0;
  }
  let r = drawn++ * RANDOM_BYTES_PER_ID;
  // xxxxxxxx-xxxx-7rrr-Vrrr-rrrrrrrrrrrr, V in 8..b
  text[14] = 0x37;
  text[15] = HEX[random[r]! & 0x0f]!;
  text[16] = HEX[random[r]! >> 4]!;
  text[17] = HEX[random[++r]! & 0x0f]!;
  text[18] = DASH;
  text[19] = HEX[0x8 | (random[r]! >> 6)]!;
  text[20] = HEX[random[++r]! & 0x0f]!;
  text[21] = HEX[random[r]! >> 4]!;
  text[22] = HEX[random[++r]! & 0x0f]!;
  text[23] = DASH;
  for (let i = 24; i < 36; i += 2) {
    const b = random[++r]!;
    text[i] = HEX[b >> 4]!;
    text[i + 1] = HEX[b & 0x0f]!;
  }
  return text.toString('latin1', 0, 36);
}

/**
 * `tttttttt-tttt-` of a millisecond into the id's text. A batch makes its ids at one `now`,
 * so it is written once per batch, not once per id.
 */
let lastMs = Number.NaN;
function writeTimePart(ms: number): void {
  if (ms === lastMs) return;
  const hex = ms.toString(16).padStart(12, '0').slice(-12);
  text.write(`${hex.slice(0, 8)}-${hex.slice(8, 12)}-`, 0, 'latin1');
  lastMs = ms;
}

/**
 * The smallest UUIDv7 of millisecond `ms`: every uuid7 made before `ms` sorts below it. A row
 * keyed by uuid7 and created before `ms` therefore lies in `id < uuid7Floor(ms)`, a primary-key
 * range: old rows are found without an index on their timestamps.
 */
export function uuid7Floor(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** The millisecond a UUIDv7 was made at; undefined for any other UUID. */
export function uuid7Time(id: string): number | undefined {
  if (id.length !== 36 || id[14] !== '7') return undefined;
  const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return Number.isFinite(ms) ? ms : undefined;
}
