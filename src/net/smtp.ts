import { isIP } from 'node:net';
import type { NodemailerError } from 'nodemailer';

/** What a connection's `smtpUrl` may say: where to connect and as whom, nothing else. */
export interface SmtpTarget {
  secure: boolean;
  host: string;
  port: number;
  auth?: { user: string; pass: string };
}

/**
 * Reads an `smtp://` or `smtps://` URL into host, port, security and auth only. Query options
 * (nodemailer reads `?debug=`, `?logger=`, `?proxy=`, `?tls.…` from a URL) and the path are
 * ignored: the URL is a tenant's, and none of those are the tenant's to set. Undefined when
 * the URL does not parse or is not SMTP.
 */
export function parseSmtpUrl(smtpUrl: string): SmtpTarget | undefined {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') return undefined;
  const secure = url.protocol === 'smtps:';
  const user = safeDecode(url.username);
  return {
    secure,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    ...(user ? { auth: { user, pass: safeDecode(url.password) } } : {}),
  };
}

/**
 * The one way this service opens SMTP: to an address already checked by the address guard
 * (`host` kept for TLS's server name), every wait bounded, nodemailer's own logging off (it
 * would print credentials and message bodies).
 */
export async function smtpTransport(address: string, smtp: SmtpTarget, timeoutMs: number) {
  // Loaded here: only a process that sends mail needs it.
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport({
    host: address,
    port: smtp.port,
    secure: smtp.secure,
    ...(isIP(smtp.host) ? {} : { servername: smtp.host }),
    ...(smtp.auth ? { auth: smtp.auth } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    logger: false,
    debug: false,
  });
}

/** What a failure to reach an SMTP server says, whatever answered in its place. */
export const SMTP_UNREACHABLE = 'could not reach the SMTP server';
/** Failures before an SMTP server greeted us. */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EPROTOCOL', 'EDNS', 'ETLS']);

/**
 * Whether nodemailer failed before an SMTP server greeted it. Its words are then not shown
 * (sends and connection checks alike say SMTP_UNREACHABLE): they would be the banner of
 * whatever listens at that host and port, telling a tenant what runs there.
 */
export function smtpNotReached(err: unknown): boolean {
  const e = err as Partial<NodemailerError>;
  return e.command === 'CONN' || CONNECTION_CODES.has(e.code ?? '');
}

/** A URL part decoded, or left as it is when it is not valid percent-encoding. */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
