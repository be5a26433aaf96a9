import { randomUUID } from 'node:crypto';

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids made in
 * time order land at the right edge of the primary-key index instead of on random pages,
 * which keeps inserts cheap as the table grows; the random part keeps them unguessable.
 * The random bits come from randomUUID, which draws from a buffered entropy pool (a call
 * to randomBytes per id costs a system call on the hot path).
 */
export function uuid7(now = Date.now()): string {
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx, N in 8..b
  // The version digit replaces the 4; the rest of random's third group on is kept as it is.
  return `${timePart(now)}-7${random.slice(15)}`;
}

/**
 * `tttttttt-tttt` of a millisecond. A batch makes its ids at one `now`, so the last one
 * made is kept: the hex of a time is written once per batch, not once per id.
 */
let lastMs = Number.NaN;
let lastTimePart = '';
function timePart(ms: number): string {
  if (ms !== lastMs) {
    const hex = ms.toString(16).padStart(12, '0').slice(-12);
    lastTimePart = `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
    lastMs = ms;
  }
  return lastTimePart;
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
