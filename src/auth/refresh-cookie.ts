import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's refresh cookie (docs/auth.md, "The console's refresh cookie"). It carries a
 * refresh token of one session, sent by the browser to the refresh route only (its `Path`),
 * never to a cross-site request (`SameSite=Strict`), and never readable by a script
 * (`HttpOnly`). The only route that reads it is `POST /api/user/refresh`.
 */
export const REFRESH_COOKIE = 'inbox_refresh';
export const REFRESH_PATH = '/api/user/refresh';

export interface CookieOptions {
  /** Only over https (`INBOX_PUBLIC_URL` is https). */
  secure: boolean;
  /** Seconds it is kept; undefined: until the browser closes. */
  maxAgeSeconds?: number;
}

function serialize(value: string, options: CookieOptions): string {
  const parts = [`${REFRESH_COOKIE}=${value}`, `Path=${REFRESH_PATH}`, 'HttpOnly', 'SameSite=Strict'];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

export function setRefreshCookie(reply: FastifyReply, token: string, options: CookieOptions): void {
  reply.header('set-cookie', serialize(token, options));
}

export function clearRefreshCookie(reply: FastifyReply, secure: boolean): void {
  reply.header('set-cookie', serialize('', { secure, maxAgeSeconds: 0 }));
}

/**
 * The refresh cookie's value from the request's `Cookie` header, or undefined. Only this one
 * name is read; a JWT is base64url and dots, so the value needs no decoding.
 */
export function readRefreshCookie(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== REFRESH_COOKIE) continue;
    const value = pair.slice(at + 1).trim();
    return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(value) ? value : undefined;
  }
  return undefined;
}
