import { Type } from 'typebox';
import { randomToken } from '../crypto/hmac.js';
import { errors } from '../http/errors.js';

/** At most this many origins per live chat widget. */
export const MAX_ALLOWED_ORIGINS = 50;

/**
 * A livechat connection's `allowedOrigins`: the web origins (`https://shop.example`, scheme,
 * host and port, no path) whose pages may call its visitor routes. Empty: any origin.
 */
export const AllowedOrigins = Type.Array(Type.String({ minLength: 1, maxLength: 300 }), {
  maxItems: MAX_ALLOWED_ORIGINS,
  description: 'livechat only: web origins (scheme://host[:port]) allowed to call the visitor routes; empty = any',
});

/** A widget key (a livechat connection's externalAccountId): public, it appears in URLs. */
export const WIDGET_KEY = /^[A-Za-z0-9_-]{1,128}$/;

/** A fresh random widget key, `wk_…`. */
export function newWidgetKey(): string {
  return randomToken('wk_', 18);
}

/**
 * An origin as a browser sends it in `Origin` (lowercase host, no default port), or null when
 * `value` is not an http(s) origin: a path, query, fragment or credentials make it a URL, not
 * an origin.
 */
export function normaliseOrigin(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash || value.includes('?') || value.includes('#'))
    return null;
  return url.origin;
}

/** The list normalised and without duplicates; 422 naming the first entry that is not an origin. */
export function checkAllowedOrigins(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const [i, value] of values.entries()) {
    const origin = normaliseOrigin(value);
    if (origin === null)
      throw errors.validation(`allowedOrigins[${i}] must be an origin such as https://shop.example (scheme, host and port; no path)`);
    out.add(origin);
  }
  return [...out];
}
