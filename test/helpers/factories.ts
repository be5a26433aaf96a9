import { randomBytes } from 'node:crypto';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import type { ConnectionCredentials } from '../../src/connections/connection-credentials.js';
import { createConnection } from '../../src/connections/connections.service.js';
import type { ManagedBy } from '../../src/db/types.js';
import type { Deps } from '../../src/deps.js';
import { createUser } from '../../src/users/users.service.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';

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
  options: {
    integrationKey?: string;
    externalAccountId?: string;
    name?: string;
    credentials?: ConnectionCredentials;
    /** Who made it: the operator (engage route, CLI) unless a test says a workspace admin did. */
    managedBy?: ManagedBy;
  } = {},
) {
  return createConnection(
    deps,
    workspaceId,
    {
      integrationKey: options.integrationKey ?? 'whatsapp',
      externalAccountId: options.externalAccountId ?? `acct-${unique()}`,
      name: options.name ?? 'Test connection',
      credentials: options.credentials,
    },
    options.managedBy ?? 'operator',
  );
}

/** An outbound message already sent through `connection` (what receipts reconcile against). */
export async function makeOutboundMessage(
  deps: Deps,
  connection: { id: number },
  externalId: string,
  status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' = 'sent',
) {
  const conn = await deps.db.selectFrom('connections').selectAll().where('id', '=', connection.id).executeTakeFirstOrThrow();
  const contact = await deps.db
    .insertInto('contacts')
    .values({ workspace_id: conn.workspace_id, name: 'Recipient' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const thread = await deps.db
    .insertInto('threads')
    .values({ workspace_id: conn.workspace_id, connection_id: conn.id, contact_id: contact.id, last_message_preview: 'hello' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return deps.db
    .insertInto('messages')
    .values({
      workspace_id: conn.workspace_id,
      thread_id: thread.id,
      connection_id: conn.id,
      direction: 'outbound',
      external_id: externalId,
      text: 'hello',
      status,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
