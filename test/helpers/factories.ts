import { randomBytes } from 'node:crypto';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { createConnection } from '../../src/connections/connections.service.js';
import type { Deps } from '../../src/deps.js';
import { createUser, createWorkspace } from '../../src/workspaces/workspaces.service.js';

const unique = () => randomBytes(4).toString('hex');

/** A workspace with an admin-scoped API key, ready to call tenant routes. */
export async function makeTenant(deps: Deps, options: { name?: string; scopes?: string[] } = {}) {
  const workspace = await createWorkspace(deps.db, options.name ?? `Workspace ${unique()}`);
  const key = await issueApiKey(deps.db, workspace.id, 'test key', options.scopes ?? ['admin']);
  return { workspace, apiKey: key.key, headers: { 'x-api-key': key.key } };
}

export async function makeUser(
  deps: Deps,
  workspaceId: number,
  options: { email?: string; password?: string; roles?: string[]; name?: string } = {},
) {
  const password = options.password ?? `pw-${unique()}-secret`;
  const user = await createUser(deps.db, workspaceId, {
    name: options.name ?? 'Test User',
    email: options.email ?? `user-${unique()}@example.test`,
    password,
    roles: options.roles ?? [],
  });
  return { user, password };
}

export async function makeConnection(
  deps: Deps,
  workspaceId: number,
  options: { integrationKey?: string; externalAccountId?: string; name?: string } = {},
) {
  return createConnection(deps.db, deps.config, workspaceId, {
    integrationKey: options.integrationKey ?? 'whatsapp',
    externalAccountId: options.externalAccountId ?? `acct-${unique()}`,
    name: options.name ?? 'Test connection',
  });
}
