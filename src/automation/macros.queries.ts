import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { RuleAction } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';
import { wellFormedJson } from '../text/well-formed.js';

/** SQL of macros (docs/automation.md). `viewer`: the user reading (their own unshared ones too), or null for an API key. */

/** The macros `viewer` sees, newest first, one cursor page (a tenant list, docs/api.md "Pagination"). */
export async function listMacros(db: Executor, workspaceId: number, viewer: number | null, page: CursorRequest) {
  return keysetPage(
    db
      .selectFrom('macros')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('shared', '=', true), viewer === null ? eb('author_id', 'is', null) : eb('author_id', '=', viewer)])),
    BY_CREATED,
    page,
  );
}

export async function findMacro(db: Executor, workspaceId: number, id: number, viewer: number | null) {
  return db
    .selectFrom('macros')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('shared', '=', true), viewer === null ? eb('author_id', 'is', null) : eb('author_id', '=', viewer)]))
    .executeTakeFirst();
}

export async function insertMacro(
  db: Executor,
  row: { workspaceId: number; name: string; actions: RuleAction[]; shared: boolean; authorId: number | null },
  at: Date,
) {
  return db
    .insertInto('macros')
    .values({
      workspace_id: row.workspaceId,
      name: row.name,
      actions: wellFormedJson(row.actions),
      shared: row.shared,
      author_id: row.authorId,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateMacro(
  db: Executor,
  workspaceId: number,
  id: number,
  patch: { name: string; actions: RuleAction[]; shared: boolean },
  at: Date,
) {
  return db
    .updateTable('macros')
    .set({ name: patch.name, actions: wellFormedJson(patch.actions), shared: patch.shared, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteMacro(db: Executor, workspaceId: number, id: number) {
  await db.deleteFrom('macros').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}
