import { type Executor, PREPARED } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';

export async function findActiveApiKeyByHash(db: Executor, keyHash: string) {
  return (
    db
      .selectFrom('api_keys')
      .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
      .select(['api_keys.id', 'api_keys.workspace_id', 'api_keys.scopes', 'api_keys.last_used_at', 'workspaces.app_id'])
      .where('api_keys.key_hash', '=', keyHash)
      .where('api_keys.revoked_at', 'is', null)
      // Read by every request an API key makes.
      .modifyEnd(PREPARED)
      .executeTakeFirst()
  );
}

export async function insertApiKey(
  db: Executor,
  row: { workspaceId: number; name: string; scopes: string[]; keyHash: string; keyPrefix: string },
) {
  return db
    .insertInto('api_keys')
    .values({
      workspace_id: row.workspaceId,
      name: row.name,
      scopes: row.scopes,
      key_hash: row.keyHash,
      key_prefix: row.keyPrefix,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Active keys of a workspace, newest first, one cursor page. */
export async function listApiKeys(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(
    db.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).where('revoked_at', 'is', null),
    BY_CREATED,
    page,
  );
}

/** Replaces the secret of an active key in place; the old key stops working at once. */
export async function replaceApiKeySecret(db: Executor, workspaceId: number, id: number, keyHash: string, keyPrefix: string) {
  return db
    .updateTable('api_keys')
    .set({ key_hash: keyHash, key_prefix: keyPrefix, last_used_at: null })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function revokeApiKey(db: Executor, workspaceId: number, id: number, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
