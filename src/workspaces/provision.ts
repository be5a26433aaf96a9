import { issueApiKey } from '../api-keys/api-keys.service.js';
import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import type { Db, Executor } from '../db/database.js';
import { createUser } from '../users/users.service.js';
import { createWorkspace } from './workspaces.service.js';

/**
 * What the operator provisions, through the engage API or the CLI: a workspace, its users and
 * its API keys, each written with its audit entry in one transaction. `trail` says who acts
 * (a request's, or the CLI's `system`) on the workspace given.
 */

export async function provisionWorkspace(db: Db, trail: (workspaceId: number) => Trail, name: string) {
  return db.transaction().execute(async (trx) => {
    const created = await createWorkspace(trx, name);
    await auditWorkspaceCreated(trx, trail(created.id), created);
    return created;
  });
}

/**
 * A user made by the operator. `joined` runs in the same transaction once they exist: the
 * engage route routes the waiting threads to them there (the CLI, without a queue, cannot).
 */
export async function provisionUser(
  db: Db,
  trail: Trail,
  workspaceId: number,
  input: { name: string; email: string; password: string; roles: string[] },
  joined?: (trx: Executor) => Promise<void>,
) {
  return db.transaction().execute(async (trx) => {
    const created = await createUser(trx, workspaceId, input);
    await auditUserCreated(trx, trail, created);
    await joined?.(trx);
    return created;
  });
}

/** The audit entry of a new workspace (provisioned here, or made by the first-run setup). */
export async function auditWorkspaceCreated(db: Executor, trail: Trail, workspace: { id: number; name: string }) {
  await recordAudit(db, trail, 'workspace.created', { type: 'workspace', id: workspace.id }, changesOf(null, { name: workspace.name }));
}

/** The audit entry of a user made with a password, which it shows only as "[set]". */
export async function auditUserCreated(db: Executor, trail: Trail, user: { id: number; name: string; email: string; roles: string[] }) {
  const shown = changesOf(null, { name: user.name, email: user.email, roles: user.roles, password: true }, ['password']);
  await recordAudit(db, trail, 'user.created', { type: 'user', id: user.id }, shown);
}

export async function provisionApiKey(db: Db, trail: Trail, workspaceId: number, name: string, scopes: string[]) {
  return db.transaction().execute(async (trx) => {
    const issued = await issueApiKey(trx, workspaceId, name, scopes);
    const shown = changesOf(null, { name: issued.name, scopes: issued.scopes, key: true }, ['key']);
    await recordAudit(trx, trail, 'api_key.created', { type: 'api_key', id: issued.id }, shown);
    return issued;
  });
}
