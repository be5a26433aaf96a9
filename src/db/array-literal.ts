import pg from 'pg';

export type ArrayElement = string | number | boolean | Date | null | undefined;

/** pg's writer of one parameter (a Date in the session's time zone, as pg sends one). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): string } }).utils;

/** From 0000-01-01 to 9999-12-31: the years toISOString writes in four digits, as Postgres reads them. */
const ISO_START = Date.parse('0000-01-01T00:00:00Z');
const ISO_END = Date.parse('+010000-01-01T00:00:00Z');

function escaped(text: string): string {
  return text.includes('\\') || text.includes('"') ? text.replaceAll('\\', '\\\\').replaceAll('"', '\\"') : text;
}

function quoted(text: string): string {
  return `"${escaped(text)}"`;
}

/** One element of an array literal, as pg writes it (see arrayLiteral). */
function element(v: ArrayElement): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return quoted(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  const t = v.getTime();
  // toISOString's Z as a numeric offset: what pg sends from a process in UTC, read by
  // Postgres without looking a zone abbreviation up.
  return t >= ISO_START && t < ISO_END ? `"${v.toISOString().slice(0, -1)}+00:00"` : quoted(prepareValue(v));
}

/**
 * The Postgres array literal of `values`: what pg itself sends for a JavaScript array, the
 * parameter of the batch statements' `unnest`. pg writes every element, numbers included,
 * through a conversion and two regular expressions, and a Date through a dozen calls; a batch
 * of deliveries sends thousands of elements. Numbers go as they print, text is quoted and
 * escaped only where it holds a quote or a backslash, and a Date as its ISO time in UTC with
 * the offset `+00:00` (the same instant; one outside the years 0–9999 as pg writes it).
 * The literal is made by one join, the braces on its first and last element: a string grown
 * by `+=` is a chain of pieces, which pg's Buffer.byteLength then copied whole into a flat one.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  const n = values.length;
  if (n === 0) return '{}';
  const parts = new Array<string>(n);
  // Text only (ids, names, types: most arrays): the quotes go in the join's separator, not
  // around each element.
  let text = true;
  for (let i = 0; i < n && text; i++) text = typeof values[i] === 'string';
  if (text) {
    for (let i = 0; i < n; i++) parts[i] = escaped(values[i] as string);
    parts[0] = `{"${parts[0]}`;
    parts[n - 1] = `${parts[n - 1]}"}`;
    return parts.join('","');
  }
  for (let i = 0; i < n; i++) parts[i] = element(values[i]);
  parts[0] = `{${parts[0]}`;
  parts[n - 1] = `${parts[n - 1]}}`;
  return parts.join(',');
}
