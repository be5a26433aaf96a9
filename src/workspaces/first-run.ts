import { personTrail } from '../audit/audit.js';
import { accountLink, consumeAccountToken, issueAccountToken, retireAccountTokens } from '../auth/account-tokens.js';
import { checkNewPassword, INVALID_LINK } from '../auth/passwords.service.js';
import { findUser } from '../auth/sessions.queries.js';
import { lockKey } from '../db/advisory-locks.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { createUser } from '../users/users.service.js';
import { auditUserCreated, auditWorkspaceCreated } from './provision.js';
import { createWorkspace } from './workspaces.service.js';

export const SETUP_DONE = 'the service is set up already: a workspace exists, so sign in instead';

async function anyWorkspace(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('workspaces').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Whether the setup screen is open: no workspace exists yet. */
export async function setupOpen(deps: Pick<Deps, 'db'>): Promise<boolean> {
  return !(await anyWorkspace(deps.db));
}

/**
 * At start, with no workspace yet: a one-time link to create the first workspace and its
 * admin, logged once (docs/accounts.md, "First run"). It works until used or until any
 * workspace exists; each start with no workspace logs a new one (only the hash is kept, so
 * an earlier link cannot be shown again) and the earlier ones keep working until then.
 */
export async function announceSetupLink(deps: Pick<Deps, 'db' | 'config' | 'log' | 'now'>): Promise<string | undefined> {
  if (await anyWorkspace(deps.db)) return undefined;
  const { token } = await issueAccountToken(deps.db, { kind: 'setup', userId: null, now: deps.now() });
  const link = accountLink(deps.config.publicUrl, 'setup', token);
  deps.log.warn(`no workspace exists yet: open ${link} to create the first workspace and its admin (the link works once)`);
  return link;
}

/**
 * Creates the first workspace and its admin with a setup token, once. Setups queue on one
 * lock, so two links used at the same moment cannot make two "first" workspaces; once any
 * workspace exists (made here, by the CLI or by the operator), this refuses (409).
 */
export async function completeSetup(
  deps: Deps,
  input: { token: string; workspaceName: string; name: string; email: string; password: string },
  ip: string,
) {
  checkNewPassword('password', input.password, input.email);
  return deps.db.transaction().execute(async (trx) => {
    await lockKey(trx, 'inbox:first-run');
    if (await anyWorkspace(trx)) throw errors.conflict(SETUP_DONE);
    if (!(await consumeAccountToken(trx, 'setup', input.token, deps.now()))) throw errors.unauthorized(INVALID_LINK);
    await retireAccountTokens(trx, 'setup', null, deps.now());
    const workspace = await createWorkspace(trx, input.workspaceName);
    const user = await createUser(trx, workspace.id, { name: input.name, email: input.email, password: input.password, roles: ['admin'] });
    // The workspace's audit log starts here, with the person who set it up as the actor.
    const trail = personTrail({ id: user.id, workspace_id: workspace.id }, ip);
    await auditWorkspaceCreated(trx, trail, workspace);
    await auditUserCreated(trx, trail, user);
    return { workspace, user: (await findUser(trx, user.id))! };
  });
}
