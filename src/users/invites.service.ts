import { randomBytes } from 'node:crypto';
import { changesOf, personTrail, recordAudit, type Trail } from '../audit/audit.js';
import { accountLink, consumeAccountToken, INVITE_TOKEN_SECONDS, issueAccountToken, retireAccountTokens } from '../auth/account-tokens.js';
import { checkNewPassword, INVALID_LINK } from '../auth/passwords.service.js';
import { findUser, setPasswordHash } from '../auth/sessions.queries.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { MailSendError, requireSystemMailer } from '../mail/system-mailer.js';
import { renderActionMail } from '../mail/templates.js';
import { enforceRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { findWorkspace } from '../workspaces/workspaces.queries.js';
import { announceUsers } from './user-events.js';
import { findPendingInvitee, updateUser } from './users.queries.js';
import { type TeamUser, teamUserResource } from './users.resources.js';
import { createUser, hashPassword, refuseOperatorRole, routeToNewUser } from './users.service.js';

/** New invites to one person not signed up yet, per hour (the first one not counted). */
export const INVITE_AGAIN_LIMIT: RateLimit = { name: 'invite-again', what: 'invites to this person', limit: 5, windowMs: 3600 * 1000 };

/**
 * Adds a user who chooses their own password (docs/accounts.md, "Invites"): the user is
 * created inactive, with a random password nobody knows, and mailed a link valid 7 days (or,
 * invited before and not signed up yet, mailed a new link that replaces the old ones). The
 * mail is sent before the transaction commits, so a mail that cannot go leaves no user behind
 * (502 `provider_error` with the server's words) and the admin can simply try again.
 */
export async function inviteUser(
  deps: Deps,
  workspaceId: number,
  inviterUserId: number | null,
  input: { name: string; email: string; roles: string[] },
  trail: Trail,
): Promise<TeamUser> {
  refuseOperatorRole(input.roles);
  const mailer = requireSystemMailer(deps);
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    const pending = await findPendingInvitee(trx, workspaceId, input.email);
    let row: Awaited<ReturnType<typeof updateUser>>;
    if (pending) {
      // Invited before and not signed up (the link lost or expired): a new link replaces the
      // old ones, with the name and roles asked now. Anyone else with the e-mail is a 409.
      // Counted per person, as reset mails are per address: a mailbox is not to be flooded.
      await enforceRateLimit(trx, INVITE_AGAIN_LIMIT, pending.id, now);
      row = await updateUser(trx, pending.id, { name: input.name, roles: [...new Set(input.roles)] });
      await retireAccountTokens(trx, 'invite', row.id, now);
      await recordAudit(trx, trail, 'user.invited', { type: 'user', id: row.id }, changesOf(pending, { ...input, email: pending.email }));
    } else {
      const created = await createUser(trx, workspaceId, { ...input, password: randomBytes(32).toString('base64url') });
      row = await updateUser(trx, created.id, { active: false });
      await recordAudit(trx, trail, 'user.invited', { type: 'user', id: row.id }, changesOf(null, input));
    }
    const workspace = await findWorkspace(trx, workspaceId);
    const inviter = inviterUserId === null ? undefined : await findUser(trx, inviterUserId);
    const { token, expiresAt } = await issueAccountToken(trx, {
      kind: 'invite',
      userId: row.id,
      now,
      lifetimeSeconds: INVITE_TOKEN_SECONDS,
    });
    const workspaceName = workspace?.name ?? 'Inbox';
    const mail = renderActionMail({
      to: row.email,
      subject: `You are invited to ${workspaceName}`,
      workspaceName,
      heading: `Join ${workspaceName}`,
      intro: `${inviter ? `${inviter.name} has` : 'You have been'} invited ${inviter ? 'you ' : ''}to answer conversations with the team of ${workspaceName}. Choose your password to sign in.`,
      buttonLabel: 'Accept the invite',
      url: accountLink(deps.config.publicUrl, 'invite', token),
      expiry: 'in 7 days',
      why: `You got this mail because an admin of ${workspaceName} added ${row.email} to the team. If you did not expect it, ignore it: nothing happens until the link is used.`,
    });
    try {
      await mailer.send(mail);
    } catch (err) {
      if (err instanceof MailSendError)
        throw errors.providerError(`the invite could not be sent, so the user was not added: ${err.message}`);
      throw err;
    }
    return teamUserResource({ ...row, connected: false, invited: true, invite_expires_at: expiresAt }); // invited: no socket yet
  });
}

/**
 * Sets the invited person's password and activates them, once, announcing `user.updated` and
 * auditing `user.invite_accepted` as theirs. A bad password leaves the link unspent; a spent,
 * expired or unknown link is refused alike.
 */
export async function acceptInvite(deps: Deps, input: { token: string; password: string }, ip: string) {
  const now = deps.now();
  const passwordHash = await hashPassword(input.password);
  return deps.db.transaction().execute(async (trx) => {
    const spent = await consumeAccountToken(trx, 'invite', input.token, now);
    const user = spent?.user_id == null ? undefined : await findUser(trx, spent.user_id);
    if (!user) throw errors.unauthorized(INVALID_LINK);
    checkNewPassword('password', input.password, user.email);
    await setPasswordHash(trx, user.id, passwordHash, true);
    await retireAccountTokens(trx, 'invite', user.id, now);
    // The person joins by their own hand: audited as theirs, like a reset link used (never the password).
    await recordAudit(trx, personTrail(user, ip), 'user.invite_accepted', { type: 'user', id: user.id }, changesOf(user, { active: true }));
    // Active from now on: the team's lists (assignees, mentions) learn it like any change of a user.
    await announceUsers(trx, [user.id], now);
    await routeToNewUser(deps, trx, user.workspace_id);
    return (await findUser(trx, user.id))!;
  });
}
