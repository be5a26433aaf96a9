import type { Executor } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../db/message-columns.js';

export async function insertExport(db: Executor, row: { id: string; workspaceId: number; contactId: number | null; expiresAt: Date }) {
  await db
    .insertInto('exports')
    .values({ id: row.id, workspace_id: row.workspaceId, contact_id: row.contactId, expires_at: row.expiresAt })
    .execute();
}

export async function findExport(db: Executor, workspaceId: number, id: string) {
  return db.selectFrom('exports').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findExportById(db: Executor, id: string) {
  return db.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Finishes a pending export; answers false when it no longer is (withdrawn by an erasure meanwhile). */
export async function finishExport(
  db: Executor,
  id: string,
  outcome: { status: 'ready'; storageKey: string; size: number } | { status: 'failed'; error: string },
  at: Date,
): Promise<boolean> {
  const result = await db
    .updateTable('exports')
    .set(
      outcome.status === 'ready'
        ? { status: 'ready', storage_key: outcome.storageKey, size: outcome.size, finished_at: at }
        : { status: 'failed', error: outcome.error, finished_at: at },
    )
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A contact merged into another: its exports are now the kept contact's, so erasing that one
 * finds them (the person is both).
 */
export async function moveContactExports(db: Executor, workspaceId: number, fromContactId: number, toContactId: number) {
  await db
    .updateTable('exports')
    .set({ contact_id: toContactId })
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', '=', fromContactId)
    .execute();
}

/** What an export that may hold an erased contact answers once withdrawn. */
export const WITHDRAWN_BY_ERASURE = 'a contact it held was erased; ask for a new export';

/**
 * The stored zips of the workspace's exports that may hold the contact: the contact's own and
 * every workspace export (the files to remove before `withdrawExportsHolding`).
 */
export async function exportKeysHolding(db: Executor, workspaceId: number, contactId: number) {
  const rows = await db
    .selectFrom('exports')
    .select('storage_key')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('contact_id', '=', contactId), eb('contact_id', 'is', null)]))
    .where('storage_key', 'is not', null)
    .execute();
  return rows.map((r) => r.storage_key!);
}

/**
 * Those exports, finished or still being written, become `failed` with no zip; answers the
 * keys of zips that were still named (written since `exportKeysHolding` read them).
 */
export async function withdrawExportsHolding(db: Executor, workspaceId: number, contactId: number, at: Date) {
  const rows = await db
    .updateTable('exports')
    .set({ status: 'failed', error: WITHDRAWN_BY_ERASURE, storage_key: null, size: null, finished_at: at })
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('contact_id', '=', contactId), eb('contact_id', 'is', null)]))
    .where((eb) => eb.or([eb('status', '=', 'pending'), eb('storage_key', 'is not', null)]))
    .returning('storage_key')
    .execute();
  return rows.flatMap((r) => (r.storage_key ? [r.storage_key] : []));
}

/** Up to `limit` exports past their time, deleted; answers their stored zips' keys. */
export async function deleteExpiredExports(db: Executor, now: Date, limit: number) {
  const rows = await db
    .deleteFrom('exports')
    .where('id', 'in', db.selectFrom('exports').select('id').where('expires_at', '<', now).orderBy('expires_at').limit(limit))
    .returning('storage_key')
    .execute();
  return { storageKeys: rows.flatMap((r) => (r.storage_key ? [r.storage_key] : [])), more: rows.length === limit };
}

// ---- what a zip holds, read page by page so no part of a workspace is ever whole in memory ----

/** Live contacts of the workspace (or the one), by id, after `afterId`. */
export async function contactsPage(db: Executor, workspaceId: number, contactId: number | null, afterId: number, limit: number) {
  let q = db
    .selectFrom('contacts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('erased_at', 'is', null)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit);
  if (contactId !== null) q = q.where('id', '=', contactId);
  return q.execute();
}

/** Thread ids of the workspace (or of the contact), by id, after `afterId`. */
export async function threadIdsPage(db: Executor, workspaceId: number, contactId: number | null, afterId: number, limit: number) {
  let q = db
    .selectFrom('threads')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit);
  if (contactId !== null) q = q.where('contact_id', '=', contactId);
  return (await q.execute()).map((r) => r.id);
}

/** A thread's messages and notes, oldest first, after message `afterId`. */
export async function messagesPage(db: Executor, threadId: number, afterId: number, limit: number) {
  return db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('thread_id', '=', threadId)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
}
