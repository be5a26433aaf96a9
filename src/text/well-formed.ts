/** A lone (unpaired) UTF-16 surrogate: with the `u` flag a pair is one code point and never matches. */
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * `text` with each lone surrogate replaced by U+FFFD, as it is stored in a text column. JSON
 * escapes a lone surrogate as `\udXXX`, which Postgres refuses in a jsonb value.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/** JSON.stringify for a jsonb value whose strings came from a client: every string and key well formed. */
export function wellFormedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'string') return wellFormed(v);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const keys = Object.keys(v);
    if (!keys.some((k) => k !== wellFormed(k))) return v;
    return Object.fromEntries(keys.map((k) => [wellFormed(k), (v as Record<string, unknown>)[k]]));
  });
}
