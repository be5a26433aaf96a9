import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import { INTEGRATION_KEYS, type Config } from '../config.js';
import type { Executor } from '../db/database.js';
import type { ConnectionsTable } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Timestamp } from '../http/schemas.js';
import { requireWorkspace } from '../workspaces/workspaces.service.js';
import { insertConnection } from './connections.queries.js';

export const ConnectionResource = Type.Object(
  { id: Type.Integer(), integrationKey: Type.String(), externalAccountId: Type.String(), name: Type.String(), createdAt: Timestamp },
  { title: 'Connection' },
);

export function connectionResource(row: Selectable<ConnectionsTable>): Static<typeof ConnectionResource> {
  return {
    id: row.id,
    integrationKey: row.integration_key,
    externalAccountId: row.external_account_id,
    name: row.name,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Connects a channel account to a workspace. A `whatsapp_session` connection is refused
 * unless the gateway's webhook signing secret (16..255 characters, checked at start) is
 * configured, because its deliveries could not be verified otherwise (SPEC §5.2 rule 4).
 */
export async function createConnection(
  db: Executor,
  config: Config,
  workspaceId: number,
  input: { integrationKey: string; externalAccountId: string; name: string },
) {
  if (!(INTEGRATION_KEYS as readonly string[]).includes(input.integrationKey)) {
    throw errors.validation(`integrationKey must be one of ${INTEGRATION_KEYS.join(', ')}`);
  }
  if (input.integrationKey === 'whatsapp_session' && !config.integrations.whatsapp_session?.webhookSecret) {
    throw errors.validation(
      'connecting a whatsapp_session requires a webhook signing secret of 16 to 255 characters: set whatsapp_session.webhookSecret in INBOX_INTEGRATIONS',
    );
  }
  await requireWorkspace(db, workspaceId);
  return connectionResource(await insertConnection(db, { workspaceId, ...input }));
}
