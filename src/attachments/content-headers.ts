/**
 * The headers an attachment's bytes are served with (docs/attachments.md, "Serving"). The
 * bytes come from anyone (a customer, a provider, an uploader), yet they are served from the
 * service's own origin, where an agent's session lives: so nothing served may ever run as a
 * page of that origin. `nosniff` holds the browser to the stored type; `sandbox` makes any
 * document (an HTML file, an SVG with a script) run without scripts and in an opaque origin;
 * anything but images, audio and video is a download, not a page.
 */
export function contentHeaders(a: { content_type: string; filename: string | null; size: number | null }): Record<string, string> {
  const family = a.content_type.split('/')[0];
  const inline = family === 'image' || family === 'audio' || family === 'video';
  const headers: Record<string, string> = {
    'content-type': a.content_type,
    'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', a.filename),
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
    'cache-control': 'private, max-age=300',
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
