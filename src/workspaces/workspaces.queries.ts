import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { offsetPage } from '../db/pages.js';
import type { OffsetRequest } from '../http/pagination.js';
import { wellFormedJson } from '../text/well-formed.js';

export async function insertWorkspace(db: Executor, name: string, appId: string) {
  return db.insertInto('workspaces').values({ name, app_id: appId }).returningAll().executeTakeFirstOrThrow();
}

export async function findWorkspace(db: Executor, id: number) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Offset page of workspaces for the operator, oldest first, with the total of the same set. */
export async function listWorkspaces(db: Executor, page: OffsetRequest) {
  return offsetPage(db.selectFrom('workspaces'), page, (q) => q.selectAll().orderBy('id'));
}

/** Sets some settings (merged into the stored ones) and/or the name; undefined when there is no such workspace. */
export async function updateWorkspaceSettings(db: Executor, id: number, patch: { name?: string; settings: Record<string, unknown> }) {
  return db
    .updateTable('workspaces')
    .set({ name: patch.name, settings: sql`settings || ${wellFormedJson(patch.settings)}::jsonb` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The `sso` setting's sealed client secret (null clears it). */
export async function setSsoClientSecret(db: Executor, id: number, sealed: Buffer | null) {
  await db.updateTable('workspaces').set({ sso_client_secret: sealed }).where('id', '=', id).execute();
}
