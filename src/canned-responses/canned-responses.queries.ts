import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';

/** A workspace's canned responses, newest first, one cursor page. */
export async function listCannedResponses(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(db.selectFrom('canned_responses').selectAll().where('workspace_id', '=', workspaceId), BY_CREATED, page);
}

/** Inserts one; undefined when the workspace already has its short code. */
export async function insertCannedResponse(db: Executor, row: { workspaceId: number; shortCode: string; content: string; at: Date }) {
  return db
    .insertInto('canned_responses')
    .values({ workspace_id: row.workspaceId, short_code: row.shortCode, content: row.content, created_at: row.at, updated_at: row.at })
    .onConflict((oc) => oc.columns(['workspace_id', 'short_code']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findCannedResponse(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('canned_responses').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findCannedResponseByCode(db: Executor, workspaceId: number, shortCode: string) {
  return db
    .selectFrom('canned_responses')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('short_code', '=', shortCode)
    .executeTakeFirst();
}

export async function updateCannedResponse(
  db: Executor,
  workspaceId: number,
  id: number,
  patch: { short_code?: string; content?: string; updated_at: Date },
) {
  return db
    .updateTable('canned_responses')
    .set(patch)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteCannedResponse(db: Executor, workspaceId: number, id: number): Promise<boolean> {
  const row = await db
    .deleteFrom('canned_responses')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
