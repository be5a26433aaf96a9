import { randomInt } from 'node:crypto';
import type { Selectable } from 'kysely';
import { recordAudit, type Trail } from '../audit/audit.js';
import { sha256Hex } from '../crypto/hmac.js';
import { open, openingKeys, SecretBoxError, seal } from '../crypto/secret-box.js';
import type { Executor } from '../db/database.js';
import type { UsersTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { enforceRateLimit, forgetRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { settleHit } from '../rate-limits/rate-limits.queries.js';
import { findWorkspaceUser } from '../users/users.queries.js';
import { OPERATOR_UNCHANGED } from '../users/users.service.js';
import { findUser } from './sessions.queries.js';
import { admitLoginAttempt, forgetSuccessfulLogin, verifyPassword } from './sessions.service.js';
import { acceptTotp, newTotpSecret, totpUrl, typedTotpCode } from './totp.js';
import {
  advanceTotpStep,
  clearTwoFactor,
  countRecoveryCodesLeft,
  enableTotp,
  replaceRecoveryCodes,
  setPendingTotpSecret,
  spendRecoveryCode,
} from './two-factor.queries.js';

type User = Selectable<UsersTable>;

/** Wrong codes counted per user over 15 minutes, like failed passwords: the 6th try → 429. */
export const OTP_LIMIT: RateLimit = { name: 'otp', what: 'wrong two-factor codes', limit: 5, windowMs: 15 * 60 * 1000 };
export const RECOVERY_CODE_COUNT = 10;
/** 16 characters of 32 (5 bits each): 80 random bits, so a SHA-256 of one is as good as a slow hash. */
const RECOVERY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

const aad = (userId: number) => `user-totp:${userId}`;

/** Where TOTP secrets are sealed and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_TOTP_SECRETS = { table: 'users', column: 'totp_secret', aad } as const;

/** What a code of the authenticator app meets when the user's sealed secret does not open. */
export const TOTP_SECRET_DOES_NOT_OPEN =
  'the two-factor secret stored for this user cannot be opened (INBOX_SECRET_KEY changed, or the row was altered or copied): sign in with a recovery code, or have an admin reset two-factor sign-in';

/** The user's TOTP secret; undefined when its sealed value does not open. */
function openSecret(deps: Deps, user: User): string | undefined {
  if (!user.totp_secret) throw errors.conflict('two-factor sign-in is not set up: call POST /v1/users/me/2fa/setup first');
  try {
    return open(openingKeys(deps), user.totp_secret, aad(user.id)).toString('utf8');
  } catch (err) {
    if (err instanceof SecretBoxError) return undefined;
    throw err;
  }
}

function newRecoveryCode(): string {
  const chars = Array.from({ length: 16 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]);
  return [0, 4, 8, 12].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** Recovery codes are compared as typed by a person: case, spaces and dashes do not matter. */
const recoveryHash = (code: string) => sha256Hex(code.toLowerCase().replace(/[\s-]/g, ''));

async function activeUser(deps: Deps, userId: number): Promise<User> {
  const user = await findUser(deps.db, userId);
  if (!user?.active) throw errors.unauthorized();
  return user;
}

export function twoFactorOn(user: User): boolean {
  return user.totp_enabled_at !== null;
}

/** `GET /v1/users/me/2fa`: whether it is on and how many recovery codes are left. */
export async function twoFactorStatus(deps: Deps, userId: number) {
  const user = await activeUser(deps, userId);
  return { enabled: twoFactorOn(user), recoveryCodesLeft: twoFactorOn(user) ? await countRecoveryCodesLeft(deps.db, userId) : 0 };
}

/** A new secret for the authenticator app; nothing is on until `enable` proves the app has it. */
export async function setupTwoFactor(deps: Deps, userId: number): Promise<{ secret: string; otpauthUrl: string }> {
  const user = await activeUser(deps, userId);
  const secret = newTotpSecret();
  if (!(await setPendingTotpSecret(deps.db, user.id, seal(deps.secretKey, secret, aad(user.id)))))
    throw errors.conflict('two-factor sign-in is already on; disable it first to set up another authenticator');
  return { secret, otpauthUrl: totpUrl(secret, user.email) };
}

/**
 * Checks a code under the OTP limit, in a transaction of its own: a wrong code's hit is
 * committed (it counts), a right one is settled at no cost, as a successful login is forgotten.
 */
async function underOtpLimit(deps: Deps, userId: number, trail: Trail, check: (trx: Executor) => Promise<boolean>): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const hit = await enforceRateLimit(trx, OTP_LIMIT, userId, deps.now());
    const ok = await check(trx);
    if (ok) await settleHit(trx, hit, 0);
    else await recordAudit(trx, trail, 'sign_in.2fa_failed', { type: 'user', id: userId });
    return ok;
  });
}

/** Turns two-factor sign-in on with a code of the set-up secret; answers the 10 recovery codes, shown this once. */
export async function enableTwoFactor(deps: Deps, userId: number, code: string, trail: Trail): Promise<{ recoveryCodes: string[] }> {
  const user = await activeUser(deps, userId);
  if (twoFactorOn(user)) throw errors.conflict('two-factor sign-in is already on');
  const secret = openSecret(deps, user);
  if (secret === undefined)
    throw errors.conflict(
      'the secret set up cannot be opened (INBOX_SECRET_KEY changed, or the row was altered or copied): call POST /v1/users/me/2fa/setup again',
    );
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const ok = await underOtpLimit(deps, user.id, trail, async (trx) => {
    const step = acceptTotp(secret, typedTotpCode(code), deps.now(), null);
    if (step === null) return false;
    if (!(await enableTotp(trx, user.id, step, deps.now()))) throw errors.conflict('two-factor sign-in is already on');
    await replaceRecoveryCodes(trx, user.id, recoveryCodes.map(recoveryHash));
    await recordAudit(trx, trail, 'two_factor.enabled', { type: 'user', id: user.id });
    return true;
  });
  if (!ok) throw errors.validation('code: not the current code of your authenticator app');
  return { recoveryCodes };
}

/** Turns it off; the password is asked (and counted like a login), so an unattended session cannot. */
export async function disableTwoFactor(deps: Deps, userId: number, password: string, trail: Trail): Promise<void> {
  const user = await activeUser(deps, userId);
  const attempt = await admitLoginAttempt(deps, user.email.toLowerCase(), trail.ip ?? '');
  if (!(await verifyPassword(user, password))) throw errors.forbidden('password: not your current password');
  await forgetSuccessfulLogin(deps, attempt);
  await deps.db.transaction().execute(async (trx) => {
    await clearTwoFactor(trx, user.id);
    await forgetRateLimit(trx, OTP_LIMIT, user.id);
    await recordAudit(trx, trail, 'two_factor.disabled', { type: 'user', id: user.id });
  });
}

/**
 * `POST /v1/users/:id/2fa/reset`: a workspace admin turns a user's two-factor sign-in off (a
 * lost phone). Not their own: that is `disable`, which asks for the password, so a session
 * left open cannot turn it off through this route either.
 */
export async function resetTwoFactor(
  deps: Deps,
  workspaceId: number,
  callerUserId: number | null,
  targetId: number,
  trail: Trail,
): Promise<void> {
  if (targetId === callerUserId)
    throw errors.validation('to turn your own two-factor sign-in off, use POST /v1/users/me/2fa/disable with your password');
  await deps.db.transaction().execute(async (trx) => {
    const user = await findWorkspaceUser(trx, workspaceId, targetId);
    if (!user) throw errors.notFound('user');
    if (user.roles.includes('operator')) throw errors.validation(OPERATOR_UNCHANGED);
    await clearTwoFactor(trx, user.id);
    // The wrong codes of the lost authenticator guarded a secret that is gone: setting up the
    // new one starts afresh, rather than meeting their 429 for up to 15 minutes.
    await forgetRateLimit(trx, OTP_LIMIT, user.id);
    await recordAudit(trx, trail, 'user.two_factor_reset', { type: 'user', id: user.id });
  });
}

/**
 * The second step of a password login: nothing for a user without two-factor sign-in;
 * otherwise `otp` must be a current code (never one already used) or an unused recovery code
 * (then spent). No `otp` → 401 `otp_required`; a wrong one → 401, the 6th in 15 minutes → 429.
 */
export async function requireSecondFactor(deps: Deps, user: User, otp: string | undefined, trail: Trail): Promise<void> {
  if (!twoFactorOn(user)) return;
  if (otp === undefined) throw errors.otpRequired();
  const code = typedTotpCode(otp);
  const totp = /^\d{6}$/.test(code);
  // Only a code of the app needs the sealed secret: when it does not open, recovery codes still sign in.
  const secret = totp ? openSecret(deps, user) : undefined;
  if (totp && secret === undefined) throw errors.unauthorized(TOTP_SECRET_DOES_NOT_OPEN);
  const ok = await underOtpLimit(deps, user.id, trail, async (trx) => {
    if (secret !== undefined) {
      const step = acceptTotp(secret, code, deps.now(), user.totp_last_step);
      return step !== null && (await advanceTotpStep(trx, user.id, step));
    }
    return spendRecoveryCode(trx, user.id, recoveryHash(code), deps.now());
  });
  if (!ok) throw errors.unauthorized('invalid two-factor code');
}
