/**
 * Which of a message's files the console may show from a blob: URL (docs/security.md, "The
 * console's tokens and files"). A blob: URL is a document of the console's own origin without
 * the content route's sandbox, so only types no browser runs keep their own type there.
 */
const RASTER_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

const essence = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** PNG, JPEG, GIF or WebP: shown as an <img>. An SVG is not one (it is a document that can carry script). */
export const isRasterImage = (contentType: string) => RASTER_IMAGES.has(essence(contentType));

/**
 * The type a file's blob may carry: its own for raster images, audio and video (but never a
 * subtype naming XML or HTML, which a browser renders as a document); else octet-stream,
 * which a browser only ever downloads.
 */
export function blobType(contentType: string): string {
  const type = essence(contentType);
  const family = type.split('/')[0];
  const media = (family === 'audio' || family === 'video') && !/xml|html/.test(type);
  return RASTER_IMAGES.has(type) || media ? type : 'application/octet-stream';
}
