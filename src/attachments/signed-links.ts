import { hkdfSync } from 'node:crypto';
import { hmacSha256, safeEqual } from '../crypto/hmac.js';
import { cleanFilename } from './content-type.js';

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
 * that fetch media by URL and for live chat visitors. `publicUrl` is INBOX_PUBLIC_URL. With
 * `name`, the path ends in the file's name (`…/content/report.pdf`), since Meta, Twilio and
 * Telegram name a file they fetch after the link's last segment; the name is not signed and
 * never read back: the id and the signature alone say what is served.
 */
export function signedLink(
  options: { publicUrl: string; key: Buffer; now: Date },
  id: number,
  { seconds = SIGNED_LINK_SECONDS, name }: { seconds?: number; name?: string | null } = {},
): string {
  const expires = Math.floor(options.now.getTime() / 1000) + seconds;
  const path = name === undefined ? '' : `/${linkName(name, id)}`;
  return `${options.publicUrl}/v1/attachments/${id}/content${path}?expires=${expires}&signature=${signed(options.key, id, expires)}`;
}

/** Fastify's router (find-my-way) matches a path parameter of at most 100 characters. */
const MAX_LINK_NAME = 100;

/**
 * A file's name as one path segment: cleaned as a stored name is (no slashes, no control
 * characters, never `.` or `..`, which a client would fold into the path), `attachment-<id>`
 * when nothing is left, percent-encoded, and shortened before its extension to fit the router.
 */
export function linkName(name: string | null, id: number): string {
  const clean = cleanFilename(name ?? undefined) ?? `attachment-${id}`;
  if (encodeURIComponent(clean).length <= MAX_LINK_NAME) return encodeURIComponent(clean);
  const dot = clean.lastIndexOf('.');
  const ext = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
  const base = [...clean.slice(0, clean.length - ext.length)];
  while (base.length > 1 && encodeURIComponent(base.join('') + ext).length > MAX_LINK_NAME) base.pop();
  const short = encodeURIComponent(base.join('') + ext);
  return short.length <= MAX_LINK_NAME ? short : `attachment-${id}`;
}

/** Whether `signature` signs attachment `id` until `expires` (unix seconds) and that time is still ahead. */
export function linkIsValid(key: Buffer, id: number, expires: number, signature: string, now: Date): boolean {
  if (!Number.isSafeInteger(expires) || expires * 1000 <= now.getTime()) return false;
  return safeEqual(signature, signed(key, id, expires));
}
