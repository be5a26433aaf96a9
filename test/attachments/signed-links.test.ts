import { describe, expect, it } from 'vitest';
import { linkIsValid, linkKey, linkName, SIGNED_LINK_SECONDS, signedLink } from '../../src/attachments/signed-links.js';

const key = linkKey(Buffer.alloc(32, 7));
const now = new Date('2026-11-24T10:00:00Z');

function parts(link: string) {
  const url = new URL(link);
  return { path: url.pathname, expires: Number(url.searchParams.get('expires')), signature: url.searchParams.get('signature')! };
}

describe('signed attachment links', () => {
  it('serve one attachment for 15 minutes under INBOX_PUBLIC_URL', () => {
    const link = signedLink({ publicUrl: 'https://inbox.example.com/base', key, now }, 42);
    const { path, expires, signature } = parts(link);
    expect(link.startsWith('https://inbox.example.com/base/v1/attachments/42/content?')).toBe(true);
    expect(path).toBe('/base/v1/attachments/42/content');
    expect(expires).toBe(now.getTime() / 1000 + SIGNED_LINK_SECONDS);
    expect(linkIsValid(key, 42, expires, signature, now)).toBe(true);
    expect(linkIsValid(key, 42, expires, signature, new Date(expires * 1000 - 1))).toBe(true);
  });

  it('refuse an expired link, another attachment, a changed expiry or another key', () => {
    const { expires, signature } = parts(signedLink({ publicUrl: 'http://x', key, now }, 42));
    expect(linkIsValid(key, 42, expires, signature, new Date(expires * 1000))).toBe(false);
    expect(linkIsValid(key, 43, expires, signature, now)).toBe(false);
    expect(linkIsValid(key, 42, expires + 1, signature, now)).toBe(false);
    expect(linkIsValid(linkKey(Buffer.alloc(32, 8)), 42, expires, signature, now)).toBe(false);
    expect(linkIsValid(key, 42, Number.NaN, signature, now)).toBe(false);
  });

  it("end in the file's name, cleaned and escaped as one path segment, when asked", () => {
    const link = signedLink({ publicUrl: 'https://inbox.example.com', key, now }, 42, { name: 'Angebot 2026/#1?.pdf' });
    const { path, expires, signature } = parts(link);
    expect(path).toBe('/v1/attachments/42/content/%231%3F.pdf');
    expect(linkIsValid(key, 42, expires, signature, now)).toBe(true);
    expect(linkName('Grüße & Co.pdf', 7)).toBe('Gr%C3%BC%C3%9Fe%20%26%20Co.pdf');
    expect(linkName('..', 7)).toBe('attachment-7');
    expect(linkName(null, 7)).toBe('attachment-7');
    expect(linkName('a\u0000b.txt', 7)).toBe('ab.txt');
    const long = linkName(`${'x'.repeat(200)}.docx`, 7);
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long.endsWith('.docx')).toBe(true);
    expect(linkName('😀'.repeat(40), 7)).toMatch(/^(%F0%9F%98%80)+$/);
  });
});
