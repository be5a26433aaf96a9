import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (connection credentials) sealed with AES-256-GCM under INBOX_SECRET_KEY.
 *
 * The sealed form is one self-describing value, stored as `bytea`:
 *   version (1 byte, 0x01) | IV (12 bytes, random per seal) | auth tag (16 bytes) | ciphertext
 * The version byte leaves room for another algorithm or a key id (rotation) without guessing.
 *
 * `aad` binds a sealed value to its place (e.g. `connection:42`): it is authenticated but not
 * stored, so a value copied into another row does not open there.
 */

export const SECRET_KEY_BYTES = 32;
const VERSION = 0x01;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + IV_BYTES + TAG_BYTES;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

function checkKey(key: Buffer): void {
  if (key.length !== SECRET_KEY_BYTES) throw new SecretBoxError(`the key must be ${SECRET_KEY_BYTES} bytes`);
}

export function seal(key: Buffer, plaintext: Buffer | string, aad: string): Buffer {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]);
}

/**
 * The keys a sealed value may open with: INBOX_SECRET_KEY, then INBOX_SECRET_KEY_PREVIOUS
 * while a rotation is under way (docs/security.md, "Secret key rotation").
 */
export function openingKeys(deps: { secretKey: Buffer; config: { previousSecretKey?: Buffer | undefined } }): Buffer[] {
  return deps.config.previousSecretKey ? [deps.secretKey, deps.config.previousSecretKey] : [deps.secretKey];
}

/**
 * Opens what `seal` made under the same key and `aad`; given several keys, under the first
 * that opens it. Throws SecretBoxError when the value is not ours, was altered, or no key or
 * the `aad` differ (GCM cannot tell these apart, by design).
 */
export function open(keys: Buffer | readonly Buffer[], sealed: Buffer, aad: string): Buffer {
  const list = Buffer.isBuffer(keys) ? [keys] : keys;
  for (const [i, key] of list.entries()) {
    try {
      return openWith(key, sealed, aad);
    } catch (err) {
      if (!(err instanceof SecretBoxError) || i === list.length - 1) throw err;
    }
  }
  throw new SecretBoxError('no key to open the sealed value with');
}

function openWith(key: Buffer, sealed: Buffer, aad: string): Buffer {
  checkKey(key);
  if (sealed.length < HEADER_BYTES || sealed[0] !== VERSION) throw new SecretBoxError('not a sealed value of a known version');
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, HEADER_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]);
  } catch {
    throw new SecretBoxError('the sealed value does not open: altered, or sealed under another key or for another row');
  }
}

/**
 * INBOX_SECRET_KEY's accepted spellings: 64 hex characters, or base64 (44 characters with
 * padding, standard or URL-safe alphabet), each exactly 32 bytes. Undefined for anything else.
 */
export function parseSecretKey(text: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=$/.test(text)) {
    const key = Buffer.from(text, 'base64');
    return key.length === SECRET_KEY_BYTES ? key : undefined;
  }
  return undefined;
}
