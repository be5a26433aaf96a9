import { personTrail, recordAudit } from '../audit/audit.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { requireSystemMailer } from '../mail/system-mailer.js';
import { renderActionMail } from '../mail/templates.js';
import { enforceRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { findUserByEmail } from '../users/users.queries.js';
import { hashPassword } from '../users/users.service.js';
import { findWorkspace } from '../workspaces/workspaces.queries.js';
import { accountLink, consumeAccountToken, issueAccountToken, RESET_TOKEN_SECONDS, retireAccountTokens } from './account-tokens.js';
import { findUser, setPasswordHash } from './sessions.queries.js';
import { admitLoginAttempt, endOtherSessions, endSessions, forgetSuccessfulLogin, verifyPassword } from './sessions.service.js';

/** docs/accounts.md: a password a person chooses (change, reset, invite, setup) has at least 12 characters. */
export const PASSWORD_MIN = 12;
/** Reset requests per e-mail address (known or not) and hour. */
export const PASSWORD_RESET_LIMIT: RateLimit = {
  name: 'password-reset',
  what: 'password reset requests for this e-mail address',
  limit: 5,
  windowMs: 3600 * 1000,
};

export const INVALID_LINK = 'token: this link is invalid, used or expired; ask for a new one';

/** The rule beyond the length the schema checks: a password is never the account's own e-mail. */
export function checkNewPassword(field: string, password: string, email: string): void {
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) throw errors.validation(`${field}: must not be your e-mail address`);
}

/**
 * A signed-in user's new password: the current one must be right (counted like a failed
 * login, so a stolen session cannot guess it at leisure), and every other session of the user
 * ends; the one asking goes on.
 */
export async function changePassword(
  deps: Deps,
  auth: { userId: number; workspaceId: number; sessionId: string },
  input: { currentPassword: string; newPassword: string },
  ip: string,
): Promise<{ endedSessions: number }> {
  const user = await findUser(deps.db, auth.userId);
  if (!user?.active) throw errors.unauthorized();
  checkNewPassword('newPassword', input.newPassword, user.email);
  const attempt = await admitLoginAttempt(deps, user.email.toLowerCase(), ip);
  if (!(await verifyPassword(user, input.currentPassword))) throw errors.forbidden('currentPassword: not your current password');
  await forgetSuccessfulLogin(deps, attempt);
  const passwordHash = await hashPassword(input.newPassword);
  const ended = await deps.db.transaction().execute(async (trx) => {
    // Only over the password just checked: of two changes at once from one current password,
    // the second finds it changed and is refused, as it would be after the first.
    if (!(await setPasswordHash(trx, user.id, passwordHash, false, user.password_hash)))
      throw errors.forbidden('currentPassword: not your current password');
    await recordAudit(trx, personTrail(user, ip), 'user.password_changed', { type: 'user', id: user.id });
    return endOtherSessions(deps, trx, { id: user.id, workspaceId: user.workspace_id }, auth.sessionId, 'password_changed');
  });
  return { endedSessions: ended.length };
}

/**
 * Mails a reset link when `email` is an active user's, and does the same work otherwise up
 * to that point: the answer (202) and its time say nothing of whether the address exists.
 * The mail leaves after the answer (sendLater). The limit counts every address, known or not.
 */
export async function requestPasswordReset(deps: Deps, rawEmail: string): Promise<void> {
  const mailer = requireSystemMailer(deps);
  const email = rawEmail.trim().toLowerCase();
  const now = deps.now();
  const mail = await deps.db.transaction().execute(async (trx) => {
    await enforceRateLimit(trx, PASSWORD_RESET_LIMIT, email, now);
    const user = await findUserByEmail(trx, email);
    if (!user?.active) return undefined;
    const workspace = await findWorkspace(trx, user.workspace_id);
    const { token } = await issueAccountToken(trx, { kind: 'password_reset', userId: user.id, now, lifetimeSeconds: RESET_TOKEN_SECONDS });
    return renderActionMail({
      to: user.email,
      subject: `Reset your password for ${workspace?.name ?? 'Inbox'}`,
      workspaceName: workspace?.name ?? 'Inbox',
      heading: 'Reset your password',
      intro: `Someone asked to reset the password of ${user.email}. Choose a new one with the button below; every device signed in to this account will be signed out.`,
      buttonLabel: 'Choose a new password',
      url: accountLink(deps.config.publicUrl, 'password_reset', token),
      expiry: 'in 1 hour',
      why: 'You got this mail because a password reset was asked for this address. If it was not you, ignore it: your password stays as it is.',
    });
  });
  if (mail) mailer.sendLater(mail, 'password_reset');
}

/**
 * Sets the password a reset link was sent for, once: the link is spent, the user's other
 * open reset links too, and every session and personal-access token of the user ends (a
 * reset is how a person takes back an account someone else may hold). A bad new password
 * leaves the link unspent.
 */
export async function confirmPasswordReset(deps: Deps, input: { token: string; newPassword: string }, ip: string) {
  const now = deps.now();
  const passwordHash = await hashPassword(input.newPassword);
  return deps.db.transaction().execute(async (trx) => {
    const spent = await consumeAccountToken(trx, 'password_reset', input.token, now);
    const user = spent?.user_id == null ? undefined : await findUser(trx, spent.user_id);
    if (!user?.active) throw errors.unauthorized(INVALID_LINK);
    checkNewPassword('newPassword', input.newPassword, user.email);
    await setPasswordHash(trx, user.id, passwordHash, false);
    await retireAccountTokens(trx, 'password_reset', user.id, now);
    await recordAudit(trx, personTrail(user, ip), 'user.password_reset', { type: 'user', id: user.id });
    await endSessions(deps, trx, { id: user.id, workspaceId: user.workspace_id }, undefined, 'password_reset');
    return user;
  });
}

/**
 * `inbox reset-password`: a reset link for an operator to hand over by other means, when the
 * service has no mail. It works exactly as a mailed one.
 */
export async function issueResetLink(deps: Pick<Deps, 'db' | 'config'>, rawEmail: string, now: Date) {
  const user = await findUserByEmail(deps.db, rawEmail.trim());
  if (!user) throw errors.notFound('user with this e-mail');
  if (!user.active) throw errors.validation('this user is deactivated (or has not accepted their invite): a reset link would not work');
  const { token, expiresAt } = await issueAccountToken(deps.db, {
    kind: 'password_reset',
    userId: user.id,
    now,
    lifetimeSeconds: RESET_TOKEN_SECONDS,
  });
  return { email: user.email, link: accountLink(deps.config.publicUrl, 'password_reset', token), expiresAt: expiresAt!.toISOString() };
}
