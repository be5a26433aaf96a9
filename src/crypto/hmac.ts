import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time string equality. The length check comes first because
 * `timingSafeEqual` throws on buffers of different lengths; the length of a secret is not
 * what we protect. The one compare helper of the project: the channel adapters, the accounts
 * webhook and the admin key use it; so will outbound webhook signing.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** HMAC-SHA256 of `data` under `key` (a string key is its UTF-8 bytes). */
export function hmacSha256(key: string | Buffer, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** Lowercase hex HMAC-SHA256 of `data` under `secret`. */
export function hmacSha256Hex(secret: string, data: string | Buffer): string {
  return hmacSha256(secret, data).toString('hex');
}

/**
 * HMAC with an algorithm a provider chose for its webhooks (Twilio: SHA-1 in base64, WAHA:
 * SHA-512 in hex), of a string's UTF-8 or of exact bytes. Compare the result with safeEqual.
 */
export function hmacDigest(algorithm: 'sha1' | 'sha512', key: string, data: string | Buffer, encoding: 'hex' | 'base64'): string {
  return createHmac(algorithm, key).update(data).digest(encoding);
}

const SHA256_PREFIX = 'sha256=';

/**
 * The digest a `sha256=<hex>` signature header carries: the prefix is stripped when present;
 * without it, the header is the digest when the prefix is optional and refused (undefined)
 * when it is required. The one parser of these headers (the channels' and the accounts
 * webhook's); each caller then compares the digest with the one helper above.
 */
export function sha256SignatureDigest(header: string | undefined, prefix: 'required' | 'optional'): string | undefined {
  if (header === undefined) return undefined;
  if (header.startsWith(SHA256_PREFIX)) return header.slice(SHA256_PREFIX.length);
  return prefix === 'optional' ? header : undefined;
}

/** SHA-256 hex of a high-entropy token (API keys, PATs, auth codes); never for passwords. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A random URL-safe token with a readable prefix, e.g. `inbox_ak_…`. */
export function randomToken(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}
