import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, parseSecretKey, SecretBoxError, seal } from '../../src/crypto/secret-box.js';

const key = randomBytes(32);

describe('secret box (AES-256-GCM)', () => {
  it('opens what it sealed, and seals the same text differently every time (random IV)', () => {
    const a = seal(key, '{"accessToken":"tok"}', 'connection:1');
    const b = seal(key, '{"accessToken":"tok"}', 'connection:1');
    expect(open(key, a, 'connection:1').toString()).toBe('{"accessToken":"tok"}');
    expect(a.equals(b)).toBe(false);
    expect(a[0]).toBe(1); // version byte
    expect(a.length).toBe(1 + 12 + 16 + '{"accessToken":"tok"}'.length);
    expect(a.includes(Buffer.from('tok'))).toBe(false);
  });

  it('refuses a value with any bit flipped (version, IV, tag or ciphertext)', () => {
    const sealed = seal(key, 'secret text', 'connection:1');
    for (let i = 0; i < sealed.length; i++) {
      const bad = Buffer.from(sealed);
      bad[i]! ^= 0x01;
      expect(() => open(key, bad, 'connection:1'), `byte ${i}`).toThrow(SecretBoxError);
    }
    expect(() => open(key, sealed.subarray(0, 20), 'connection:1')).toThrow(SecretBoxError);
  });

  it('refuses a wrong key and a wrong AAD (a value copied to another row)', () => {
    const sealed = seal(key, 'secret text', 'connection:1');
    expect(() => open(randomBytes(32), sealed, 'connection:1')).toThrow(SecretBoxError);
    expect(() => open(key, sealed, 'connection:2')).toThrow(SecretBoxError);
  });

  it('takes only 32-byte keys', () => {
    expect(() => seal(randomBytes(16), 'x', 'a')).toThrow(SecretBoxError);
  });

  it('parses a key given as 64 hex or 44 base64 characters, nothing else', () => {
    expect(parseSecretKey(key.toString('hex'))?.equals(key)).toBe(true);
    expect(parseSecretKey(key.toString('base64'))?.equals(key)).toBe(true);
    expect(parseSecretKey(`${key.toString('base64url')}=`)?.equals(key)).toBe(true);
    for (const bad of [
      key.toString('hex').slice(2),
      key.toString('base64').slice(0, 43),
      randomBytes(33).toString('base64'),
      'x'.repeat(64),
      '',
    ]) {
      expect(parseSecretKey(bad), bad).toBeUndefined();
    }
  });
});
