import type { Executor } from '../db/database.js';
import type { Cursor } from '../http/pagination.js';
import { sql } from 'kysely';

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

/** A workspace's connections, newest first, `limit + 1` rows from after `cursor`. */
export async function listConnections(db: Executor, workspaceId: number, limit: number, cursor: Cursor | undefined) {
  let q = db.selectFrom('connections').selectAll().where('workspace_id', '=', workspaceId);
  if (cursor) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(cursor.at, cursor.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
}

/** Every connection with its workspace's app id, for the operator: offset page plus total. */
export async function listAllConnections(
  db: Executor,
  filter: { workspaceId?: number; integrationKey?: string },
  limit: number,
  offset: number,
) {
  let q = db.selectFrom('connections');
  if (filter.workspaceId !== undefined) q = q.where('workspace_id', '=', filter.workspaceId);
  if (filter.integrationKey !== undefined) q = q.where('integration_key', '=', filter.integrationKey);
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('id').limit(limit).offset(offset).execute(),
    q.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.n };
}
