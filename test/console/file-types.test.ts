import { describe, expect, it } from 'vitest';
import { blobType, isRasterImage } from '../../src/console/shared/file-types.js';

// The types the console gives a file's blob: URL, a document of its own origin.
describe('file types in the console', () => {
  it('keeps the type of raster images, audio and video only', () => {
    for (const type of ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'audio/ogg', 'video/mp4'])
      expect(blobType(type), type).toBe(type);
    expect(blobType('Image/PNG; x=y')).toBe('image/png');
  });

  it('makes every other file octet-stream, which a browser only downloads', () => {
    for (const type of [
      'image/svg+xml',
      'text/html',
      'application/xhtml+xml',
      'text/xml',
      'application/xml',
      'text/javascript',
      'text/css',
      'application/pdf',
      'text/plain',
      'image/bmp',
      'audio/x+xml',
      'video/html',
      '',
      'nonsense',
    ])
      expect(blobType(type), type).toBe('application/octet-stream');
  });

  it('shows only raster images as images: never an SVG', () => {
    expect(isRasterImage('image/webp')).toBe(true);
    expect(isRasterImage('image/svg+xml')).toBe(false);
    expect(isRasterImage('video/mp4')).toBe(false);
  });
});
