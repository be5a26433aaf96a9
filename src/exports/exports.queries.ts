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

export async function finishExport(
  db: Executor,
  id: string,
  outcome: { status: 'ready'; storageKey: string; size: number } | { status: 'failed'; error: string },
  at: Date,
) {
  await db
    .updateTable('exports')
    .set(
      outcome.status === 'ready'
        ? { status: 'ready', storage_key: outcome.storageKey, size: outcome.size, finished_at: at }
        : { status: 'failed', error: outcome.error, finished_at: at },
    )
    .where('id', '=', id)
    .execute();
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
