import pg from 'pg';

export type ArrayElement = string | number | boolean | Date | null | undefined;

/** pg's writer of one parameter (a Date in the session's time zone, as pg sends one). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): string } }).utils;

/** From 0000-01-01 to 9999-12-31: the years toISOString writes in four digits, as Postgres reads them. */
const ISO_START = Date.parse('0000-01-01T00:00:00Z');
const ISO_END = Date.parse('+010000-01-01T00:00:00Z');

function quoted(text: string): string {
  return text.includes('\\') || text.includes('"') ? `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : `"${text}"`;
}

/**
 * The Postgres array literal of `values`: what pg itself sends for a JavaScript array, the
 * parameter of the batch statements' `unnest`. pg writes every element, numbers included,
 * through a conversion and two regular expressions, and a Date through a dozen calls; a batch
 * of deliveries sends thousands of elements. Numbers go as they print, text is quoted and
 * escaped only where it holds a quote or a backslash, and a Date as its ISO time in UTC with
 * the offset `+00:00` (the same instant; one outside the years 0–9999 as pg writes it).
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else if (typeof v === 'string') out += quoted(v);
    else if (typeof v === 'boolean') out += v ? 'true' : 'false';
    else {
      const t = v.getTime();
      // toISOString's Z as a numeric offset: what pg sends from a process in UTC, read by
      // Postgres without looking a zone abbreviation up.
      out += t >= ISO_START && t < ISO_END ? `"${v.toISOString().slice(0, -1)}+00:00"` : quoted(prepareValue(v));
    }
  }
  return `${out}}`;
}
