import { isObject } from '../channels/channel.js';

/** Meta's numbered placeholders: `{{1}}`, `{{2}}`, … */
const PLACEHOLDER = /\{\{\s*(\d+)\s*\}\}/g;

/** The text of a template's component of `type` (BODY, HEADER), when it has one. */
export function componentText(components: unknown, type: 'BODY' | 'HEADER'): string | undefined {
  if (!Array.isArray(components)) return undefined;
  const c = components.find((x) => isObject(x) && typeof x.type === 'string' && x.type.toUpperCase() === type);
  return isObject(c) && typeof c.text === 'string' ? c.text : undefined;
}

/** How many distinct `{{n}}` a text has (a placeholder used twice takes one parameter). */
export function countParameters(text: string | undefined): number {
  if (!text) return 0;
  return new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1])).size;
}

/** The text with `{{n}}` replaced by the n-th parameter; one without a parameter stays as it is. */
export function fillParameters(text: string, parameters: readonly string[]): string {
  return text.replace(PLACEHOLDER, (whole, n: string) => parameters[Number(n) - 1] ?? whole);
}
