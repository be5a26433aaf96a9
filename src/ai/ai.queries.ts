import type { Executor } from '../db/database.js';

export async function findAiSettings(db: Executor, workspaceId: number) {
  return db.selectFrom('workspace_ai').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** Writes the fields given (the others keep their value); a workspace's first write creates its row. */
export async function upsertAiSettings(
  db: Executor,
  workspaceId: number,
  patch: { baseUrl?: string | null; model?: string | null; apiKeySealed?: Buffer | null; enabled?: boolean },
  at: Date,
) {
  const set = {
    ...(patch.baseUrl !== undefined ? { base_url: patch.baseUrl } : {}),
    ...(patch.model !== undefined ? { model: patch.model } : {}),
    ...(patch.apiKeySealed !== undefined ? { api_key_sealed: patch.apiKeySealed } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    updated_at: at,
  };
  return db
    .insertInto('workspace_ai')
    .values({ workspace_id: workspaceId, ...set })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(set))
    .returningAll()
    .executeTakeFirstOrThrow();
}
