import { cleanContentType, OCTET_STREAM, ZIPPED_DOCUMENTS } from './content-type.js';

/** Raster images: shown inline. SVG is not one of them (an SVG is a document that can carry script). */
const RASTER_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * Types no browser runs as a page, kept as they are but always downloaded. Plain text is
 * served with its charset named, so a browser never guesses one.
 */
const INERT_DOWNLOADS = new Map<string, string>([
  ['application/pdf', 'application/pdf'],
  ['text/plain', 'text/plain; charset=utf-8'],
  ['text/csv', 'text/csv'],
  ['application/zip', 'application/zip'],
  ['application/msword', 'application/msword'],
  ['application/vnd.ms-excel', 'application/vnd.ms-excel'],
  ['application/vnd.ms-powerpoint', 'application/vnd.ms-powerpoint'],
  ...ZIPPED_DOCUMENTS.map((t): [string, string] => [t, t]),
]);

/**
 * How a stored type is served: raster images, audio and video inline with their own type;
 * the inert document types above as downloads with their own type; anything else (HTML,
 * XHTML, SVG, XML, JavaScript, CSS, a type never seen) as an `application/octet-stream`
 * download, which no browser renders or runs, and which `script-src 'self'` can never load
 * as a script of the service's origin.
 */
export function servedType(stored: string): { type: string; inline: boolean } {
  const type = cleanContentType(stored) ?? OCTET_STREAM;
  if (RASTER_IMAGES.has(type) || isMedia(type)) return { type, inline: true };
  return { type: INERT_DOWNLOADS.get(type) ?? OCTET_STREAM, inline: false };
}

/**
 * Audio and video, except a subtype naming XML or HTML: a browser renders any `…+xml` type
 * as an XML document (which may hold XHTML script), whatever its family says.
 */
function isMedia(type: string): boolean {
  const family = type.split('/')[0];
  return (family === 'audio' || family === 'video') && !/xml|html/.test(type);
}

/**
 * The headers an attachment's bytes are served with (docs/attachments.md, "Serving"). The
 * bytes come from anyone (a customer, a provider, an uploader), yet they are served from the
 * service's own origin, where an agent's session lives: so nothing served may ever run as a
 * page of that origin. Only inert types keep their own type (`servedType`); `nosniff` holds
 * the browser to it; `sandbox` makes any document that still opened run without scripts and
 * in an opaque origin; anything but images, audio and video is a download, not a page.
 */
export function contentHeaders(a: { content_type: string; filename: string | null; size: number | null }): Record<string, string> {
  const served = servedType(a.content_type);
  const headers: Record<string, string> = {
    'content-type': served.type,
    'content-disposition': contentDisposition(served.inline ? 'inline' : 'attachment', a.filename),
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
    'cache-control': 'private, max-age=300',
    // The same URL answers 401 without a credential: a browser must not reuse an answer it got
    // with the agent's token for a later request that carries none.
    vary: 'Authorization',
  };
  if (a.size !== null) headers['content-length'] = String(a.size);
  return headers;
}

/**
 * RFC 6266: an ASCII `filename` for old clients (anything else, quotes and backslashes
 * replaced by `_`) and the exact name as UTF-8 in `filename*` (RFC 8187 percent-encoding).
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string | null): string {
  if (!filename) return type;
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
