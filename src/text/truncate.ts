/**
 * `text` cut to at most `max` characters (Unicode code points, as Postgres counts them), never
 * in the middle of a surrogate pair. Stored error texts come from providers and exceptions and
 * have no length of their own; every column that keeps one bounds it with this.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = 0;
  for (let n = 0; n < max && end < text.length; n++) {
    const code = text.charCodeAt(end);
    end += code >= 0xd800 && code <= 0xdbff && end + 1 < text.length ? 2 : 1;
  }
  return text.slice(0, end);
}
