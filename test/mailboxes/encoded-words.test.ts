import { describe, expect, it } from 'vitest';
import { decodeEncodedWords } from '../../src/text/encoded-words.js';

describe('RFC 2047 encoded words', () => {
  it('decodes B and Q words, a character split between two words, and drops the space between words', () => {
    expect(decodeEncodedWords('=?ISO-8859-1?Q?Caf=E9_cr=E8me?= order')).toBe('Café crème order');
    expect(decodeEncodedWords('=?UTF-8?B?8J+Y?= =?UTF-8?B?gA==?= ok')).toBe('😀 ok');
    expect(decodeEncodedWords('=?utf-8?b?w4k=?=\r\n =?iso-8859-1?q?t=E9?=')).toBe('Été');
  });

  it('leaves plain text, an unknown charset and a stray =? as written, and keeps one line', () => {
    expect(decodeEncodedWords('Re: =? what')).toBe('Re: =? what');
    expect(decodeEncodedWords('a =?x-nope?Q?z?= b')).toBe('a =?x-nope?Q?z?= b');
    expect(decodeEncodedWords('=?UTF-8?Q?one=0D=0ABcc:_x@y.test?=')).toBe('one Bcc: x@y.test');
  });
});
