import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage, offsetPage } from '../db/pages.js';
import type { CursorRequest, OffsetRequest } from '../http/pagination.js';

export async function insertConnection(
  db: Executor,
  row: { workspaceId: number; integrationKey: string; externalAccountId: string; name: string},
) {
  return db
    .insertInto('connections')
    .values({
      workspace_id: row.workspaceId,
      integration_key: row.integrationKey,
      external_account_id: row.externalAccountId,
      name: row.name,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A workspace's connections, newest first, one cursor page. */
export async function listConnections(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId), BY_CREATED, page);
}

/** Every connection with its workspace's app id, for the operator: offset page plus total. */
export async function listAllConnections(
  db: Executor,
  filter: { workspaceId?: number; integrationKey?: string },
  page: OffsetRequest,
) {
  let q = db.selectFrom('connections');
  if (filter.workspaceId !== undefined) q = q.where('workspace_id', '=', filter.workspaceId);
  if (filter.integrationKey !== undefined) q = q.where('integration_key', '=', filter.integrationKey);
  return offsetPage(q, page, (b) => b.selectAll().orderBy('id'));
}
