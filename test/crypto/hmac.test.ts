import { describe, expect, it } from 'vitest';
import { sha256SignatureDigest } from '../../src/crypto/hmac.js';

describe('sha256SignatureDigest: the one parser of `sha256=` signature headers', () => {
  it('strips the prefix whether it is required or optional', () => {
    expect(sha256SignatureDigest('sha256=ab12', 'required')).toBe('ab12');
    expect(sha256SignatureDigest('sha256=ab12', 'optional')).toBe('ab12');
  });

  it('takes a bare digest only when the prefix is optional', () => {
    expect(sha256SignatureDigest('ab12', 'optional')).toBe('ab12');
    expect(sha256SignatureDigest('ab12', 'required')).toBeUndefined();
  });

  it('refuses a missing header, and a prefix of another case or algorithm when it is required', () => {
    expect(sha256SignatureDigest(undefined, 'optional')).toBeUndefined();
    expect(sha256SignatureDigest('SHA256=ab12', 'required')).toBeUndefined();
    expect(sha256SignatureDigest('sha1=ab12', 'required')).toBeUndefined();
  });
});
