import { generateSecret, generateSync, generateURI, verifySync } from 'otplib';

/**
 * TOTP (RFC 6238) as every authenticator app reads it: SHA-1, 6 digits, 30-second steps, a
 * 20-byte secret in base32. otplib does the arithmetic; this module fixes the parameters once.
 */
export const TOTP_PERIOD_SECONDS = 30;
const ISSUER = 'inbox';

export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The `otpauth://totp/…` address an authenticator app takes from the QR code. */
export function totpUrl(secret: string, account: string): string {
  return generateURI({ issuer: ISSUER, label: account, secret });
}

/** The code of `secret` at `epochSeconds` (the RFC's vectors use 8 digits; apps show 6). */
export function totpCode(secret: string, epochSeconds: number, digits: 6 | 8 = 6): string {
  return generateSync({ secret, epoch: epochSeconds, digits });
}

/**
 * A code as a person typed it: authenticator apps show it in two groups ("123 456"), so spaces
 * (and a dash) between the digits do not count. Anything else is left for the check to refuse.
 */
export function typedTotpCode(typed: string): string {
  const digits = typed.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(digits) ? digits : typed.trim();
}

/**
 * The time step a code belongs to, when it is the code of the step of `now` or of the step on
 * either side (a phone's clock a little off, a code typed as it turned), and newer than
 * `afterStep` (the step of the last code accepted, so one code never works twice); else null.
 */
export function acceptTotp(secret: string, code: string, now: Date, afterStep: number | null): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const epoch = Math.floor(now.getTime() / 1000);
  const result = verifySync({ secret, token: code, epoch, epochTolerance: TOTP_PERIOD_SECONDS });
  if (!result.valid) return null;
  const step = Math.floor(epoch / TOTP_PERIOD_SECONDS) + result.delta;
  return afterStep !== null && step <= afterStep ? null : step;
}
