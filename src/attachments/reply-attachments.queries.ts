import type { Executor } from '../db/database.js';

/**
 * SQL of attachments on their way out (docs/attachments.md, "Outbound"): the uploads a reply
 * names, linked to its message in the reply's transaction, and read again by the sender.
 */

/**
 * The workspace's attachments among `ids`, locked until the transaction ends: two replies that
 * name one upload at once are taken one after the other, and the second sees it used.
 */
export async function lockReplyAttachments(db: Executor, workspaceId: number, ids: number[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('attachments')
    .select(['id', 'kind', 'status', 'message_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Puts the attachments `ids` on message `messageId` (in the transaction that writes it). */
export async function linkAttachments(db: Executor, ids: number[], messageId: number, at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('attachments').set({ message_id: messageId, updated_at: at }).where('id', 'in', ids).execute();
}
