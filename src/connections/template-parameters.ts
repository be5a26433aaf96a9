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

/**
 * A part of a template that needs a parameter other than text, which a reply has no way to
 * give (only `header` and `body` text lists): a media or location header, a URL button
 * with a placeholder, a coupon code's COPY_CODE button, or a carousel's cards. Meta refuses a
 * send that leaves one out, so such a template is refused before anything is queued. Answers
 * how to name it (`an IMAGE header`), else undefined.
 */
export function unfillableComponent(components: unknown): string | undefined {
  if (!Array.isArray(components)) return undefined;
  for (const c of components) {
    if (!isObject(c) || typeof c.type !== 'string') continue;
    const type = c.type.toUpperCase();
    const format = typeof c.format === 'string' ? c.format.toUpperCase() : 'TEXT';
    if (type === 'HEADER' && format !== 'TEXT') return `a${/^[AEIOU]/.test(format) ? 'n' : ''} ${format} header`;
    // A carousel's cards each need their header's media at send time.
    if (type === 'CAROUSEL') return 'a CAROUSEL';
    if (type === 'BUTTONS' && Array.isArray(c.buttons)) {
      const dynamic = c.buttons.find((b) => isObject(b) && typeof b.url === 'string' && countParameters(b.url) > 0);
      if (dynamic) return 'a URL button with a placeholder';
      // A coupon code template's code is given only at send time (Meta's `coupon_code`).
      if (c.buttons.some((b) => isObject(b) && typeof b.type === 'string' && b.type.toUpperCase() === 'COPY_CODE'))
        return 'a COPY_CODE button';
    }
  }
  return undefined;
}
