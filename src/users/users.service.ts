import argon2 from 'argon2';
import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import { retireAccountTokens } from '../auth/account-tokens.js';
import { endSessions } from '../auth/sessions.service.js';
import type { Executor } from '../db/database.js';
import type { UserAvailability } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { publishSightChanged } from '../realtime/publish.js';
import { routeWaiting } from '../threads/routing.js';
import { restrictsAgents } from '../threads/visibility.js';
import { requireWorkspace } from '../workspaces/workspaces.service.js';
import { announceUsers } from './user-events.js';
import { findUserByEmail, findUserViews, findWorkspaceUser, insertUser, lockActiveAdmins, updateUser } from './users.queries.js';
import { type TeamUser, teamUserResource, userResource } from './users.resources.js';

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
}

/** A user of the workspace; 409 when any workspace's user has the e-mail already. */
export async function createUser(
  db: Executor,
  workspaceId: number,
  input: { name: string; email: string; password: string; roles: string[] },
) {
  await requireWorkspace(db, workspaceId);
  if (await findUserByEmail(db, input.email)) throw errors.conflict('a user with this e-mail already exists');
  const passwordHash = await hashPassword(input.password);
  const row = await insertUser(db, {
    workspaceId,
    name: input.name,
    email: input.email,
    passwordHash,
    roles: [...new Set(input.roles)],
  });
  return userResource(row);
}

/**
 * The role `operator` reaches every tenant (`/v1/operator/*`): only the deployment's operator
 * grants it, with the admin key or the CLI (docs/security.md). A workspace admin, holding
 * power over one tenant, can neither grant it nor touch a user who has it.
 */
export const OPERATOR_REFUSED = 'the operator role is granted only by the platform operator (admin key or CLI), never through /v1/users';
export const OPERATOR_UNCHANGED = 'this user is a platform operator: only the platform operator (admin key or CLI) may change them';

export function refuseOperatorRole(roles: readonly string[] | undefined) {
  if (roles?.includes('operator')) throw errors.validation(OPERATOR_REFUSED);
}

export async function addTeamUser(
  deps: Deps,
  workspaceId: number,
  input: { name: string; email: string; password: string; roles: string[] },
  trail: Trail,
) {
  refuseOperatorRole(input.roles);
  const created = await deps.db.transaction().execute(async (trx) => {
    const user = await createUser(trx, workspaceId, input);
    const { password: _secret, ...shown } = input;
    await recordAudit(
      trx,
      trail,
      'user.created',
      { type: 'user', id: user.id },
      changesOf(null, { ...shown, password: true }, ['password']),
    );
    await routeToNewUser(deps, trx, workspaceId);
    return user;
  });
  return teamUserResource((await findUserViews(deps.db, [created.id], deps.now()))[0]!);
}

/**
 * A user who has just become one who takes threads (made with a password, an invite accepted,
 * a first single sign-on) is `online` by default: the waiting threads they may take are
 * routed in the caller's transaction, as when a user is reactivated (docs/teams.md, "The queue").
 */
export async function routeToNewUser(deps: Deps, trx: Executor, workspaceId: number) {
  await routeWaiting(deps, trx, workspaceId, deps.now());
}

export interface UserPatch {
  name?: string;
  roles?: string[];
  active?: boolean;
  maxOpenThreads?: number | null;
}

/**
 * Changes a user of the workspace. Deactivating ends, in the same transaction, every session
 * and personal-access token the user holds and tells every api process to close their
 * sockets (the `session.revoked` path that logout uses); their assigned threads stay theirs.
 * A change that would leave the workspace without an active admin is refused (422): an
 * admin cannot deactivate themselves or drop their own admin role, and neither can anyone
 * else take away the last one. Neither the role `operator` nor a user who holds it is a
 * workspace admin's to change (422, as above). A change is announced as `user.updated`; one
 * that may let the user take more threads (cap, roles, reactivation) routes the waiting ones.
 */
export async function changeTeamUser(
  deps: Deps,
  workspaceId: number,
  callerUserId: number | null,
  id: number,
  patch: UserPatch,
  trail: Trail,
): Promise<TeamUser> {
  refuseOperatorRole(patch.roles);
  return deps.db.transaction().execute(async (trx) => {
    // The admins are locked before the target is read, so two admins changing each other at
    // once cannot both pass the "another admin remains" check below.
    const admins = await lockActiveAdmins(trx, workspaceId);
    const user = await findWorkspaceUser(trx, workspaceId, id);
    if (!user) throw errors.notFound('user');
    if (user.roles.includes('operator')) throw errors.validation(OPERATOR_UNCHANGED);
    const roles = patch.roles === undefined ? undefined : [...new Set(patch.roles)];
    const staysAdmin = (patch.active ?? user.active) && (roles ?? user.roles).includes('admin');
    if (admins.includes(id) && !staysAdmin) {
      if (id === callerUserId) {
        throw errors.validation(patch.active === false ? 'you cannot deactivate yourself' : 'you cannot remove your own admin role');
      }
      if (admins.length === 1) throw errors.validation('the workspace must keep at least one active admin');
    }
    await updateUser(trx, id, {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(roles ? { roles } : {}),
      ...(patch.active !== undefined ? { active: patch.active } : {}),
      ...(patch.maxOpenThreads !== undefined ? { max_open_threads: patch.maxOpenThreads } : {}),
    });
    const changes = changesOf(
      { name: user.name, roles: user.roles, active: user.active, maxOpenThreads: user.max_open_threads },
      { name: patch.name, roles, active: patch.active, maxOpenThreads: patch.maxOpenThreads },
    );
    const action =
      user.active && patch.active === false ? 'user.deactivated' : !user.active && patch.active ? 'user.reactivated' : 'user.updated';
    await recordAudit(trx, trail, action, { type: 'user', id }, changes);
    // The admin role given or taken changes which threads they see: their clients re-read.
    const admin = (roles ?? user.roles).includes('admin');
    if (admin !== user.roles.includes('admin') && (await restrictsAgents(trx, workspaceId)))
      await publishSightChanged(trx, workspaceId, [id]);
    if (user.active && patch.active === false) await endSessions(deps, trx, { id, workspaceId }, undefined, 'deactivated');
    // An invite not yet accepted, or a reset link mailed before, would otherwise let a
    // deactivated person in (docs/accounts.md), at once or once they are reactivated.
    if (patch.active === false) {
      await retireAccountTokens(trx, 'invite', id, deps.now());
      await retireAccountTokens(trx, 'password_reset', id, deps.now());
    }
    return changed(deps, trx, user, patch.maxOpenThreads !== undefined || roles !== undefined || patch.active === true);
  });
}

/** `PATCH /v1/users/me`: what a user may change of themselves. */
export interface OwnUserPatch {
  name?: string;
  availability?: UserAvailability;
  /** Merged into what is set: a field left out keeps its value. */
  notify?: { email?: { assigned?: boolean; mentioned?: boolean; sla?: boolean } };
}

/**
 * `PATCH /v1/users/me`: a user's own name, availability and notification e-mail settings.
 * Going `online` routes the waiting threads (docs/teams.md), in this transaction. Answers
 * the user with their own settings (`notify`).
 */
export async function changeOwnUser(deps: Deps, workspaceId: number, id: number, patch: OwnUserPatch): Promise<TeamUser> {
  return deps.db.transaction().execute(async (trx) => {
    const user = await findWorkspaceUser(trx, workspaceId, id);
    if (!user) throw errors.notFound('user');
    const email = patch.notify?.email ?? {};
    const set = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.availability !== undefined ? { availability: patch.availability } : {}),
      ...(email.assigned !== undefined ? { notify_email_assigned: email.assigned } : {}),
      ...(email.mentioned !== undefined ? { notify_email_mentioned: email.mentioned } : {}),
      ...(email.sla !== undefined ? { notify_email_sla: email.sla } : {}),
    };
    if (Object.keys(set).length > 0) await updateUser(trx, id, set);
    // Saying `online` again routes too: threads may wait that no change has routed to this
    // online user yet (one the CLI made, say).
    return changed(deps, trx, user, patch.availability === 'online', true);
  });
}

/** Announces a changed user and, when it may have freed them up, routes the waiting threads. */
async function changed(
  deps: Deps,
  trx: Executor,
  before: { id: number; workspace_id: number },
  route: boolean,
  self = false,
): Promise<TeamUser> {
  const now = deps.now();
  if (route) await routeWaiting(deps, trx, before.workspace_id, now);
  await announceUsers(trx, [before.id], now);
  return teamUserResource((await findUserViews(trx, [before.id], now))[0]!, self);
}
