import pg from 'pg';

/**
 * pg's parser of a timestamp's text (postgres-date, the same function for timestamp and
 * timestamptz): what every form the fast path below does not read still goes through.
 */
const postgresDate = pg.types.getTypeParser(pg.types.builtins.TIMESTAMP) as (text: string) => Date | number | null;

const POWERS_OF_TEN = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];

/** The number `text` writes in [from, to), or -1 if a character there is not a digit. */
function digits(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * A timestamptz as Postgres writes it (`2026-11-27 15:14:05.123456+00`, the offset `±HH` or
 * `±HH:MM`), read into the Date postgres-date makes of it, without its regular expressions:
 * every message, thread and inbox row a worker's batch reads back carries two to six of them,
 * and each cost a match array and a dozen strings. The rest (years before 100 or past 9999, BC,
 * infinity, an offset with seconds) goes to postgres-date itself.
 */
export function parseTimestamptz(text: string): Date | number | null {
  const n = text.length;
  if (
    n < 22 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 32 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  )
    return postgresDate(text);
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  const hour = digits(text, 11, 13);
  const minute = digits(text, 14, 16);
  const second = digits(text, 17, 19);
  if (year < 100 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return postgresDate(text);
  let i = 19;
  let ms = 0;
  if (text.charCodeAt(i) === 46) {
    let end = i + 1;
    while (end < n && end - i <= 6 && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
    const places = end - i - 1;
    if (places === 0) return postgresDate(text);
    // postgres-date's `1000 * parseFloat('.123456')`: the quotient of two exact numbers is the
    // same correctly rounded double as parseFloat's, and Date.UTC cuts it to whole milliseconds.
    ms = 1000 * (digits(text, i + 1, end) / POWERS_OF_TEN[places]!);
    i = end;
  }
  const sign = text.charCodeAt(i);
  if ((sign !== 43 && sign !== 45) || (n !== i + 3 && (n !== i + 6 || text.charCodeAt(i + 3) !== 58))) return postgresDate(text);
  const offsetHours = digits(text, i + 1, i + 3);
  const offsetMinutes = n === i + 6 ? digits(text, i + 4, i + 6) : 0;
  if (offsetHours < 0 || offsetMinutes < 0) return postgresDate(text);
  const offset = (offsetHours * 3600 + offsetMinutes * 60) * 1000;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - (sign === 45 ? -offset : offset));
}
