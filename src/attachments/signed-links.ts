import { hkdfSync } from 'node:crypto';
import { hmacSha256, safeEqual } from '../crypto/hmac.js';

/** How long a signed link to an attachment works (docs/attachments.md). */
export const SIGNED_LINK_SECONDS = 15 * 60;

/**
 * The key signed links are made with: derived from INBOX_SECRET_KEY for this one use, so a
 * link's signature says nothing about the key that seals credentials.
 */
export function linkKey(secretKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'inbox attachment links', 32));
}

const signed = (key: Buffer, id: number, expires: number) => hmacSha256(key, `${id}.${expires}`).toString('hex');

/**
 * A link that serves attachment `id` without a credential until it expires: for providers
 * that fetch media by URL and for live chat visitors. `publicUrl` is INBOX_PUBLIC_URL.
 */
export function signedLink(options: { publicUrl: string; key: Buffer; now: Date }, id: number, seconds = SIGNED_LINK_SECONDS): string {
  const expires = Math.floor(options.now.getTime() / 1000) + seconds;
  return `${options.publicUrl}/v1/attachments/${id}/content?expires=${expires}&signature=${signed(options.key, id, expires)}`;
}

/** Whether `signature` signs attachment `id` until `expires` (unix seconds) and that time is still ahead. */
export function linkIsValid(key: Buffer, id: number, expires: number, signature: string, now: Date): boolean {
  if (!Number.isSafeInteger(expires) || expires * 1000 <= now.getTime()) return false;
  return safeEqual(signature, signed(key, id, expires));
}
