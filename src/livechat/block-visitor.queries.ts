import type { Executor } from '../db/database.js';

/** A thread of the workspace with its channel; undefined when the workspace has no such thread. */
export async function findThreadChannel(db: Executor, workspaceId: number, threadId: number) {
  return db
    .selectFrom('threads')
    .innerJoin('connections', 'connections.id', 'threads.connection_id')
    .select(['threads.id', 'threads.contact_id', 'threads.connection_id', 'connections.integration_key'])
    .where('threads.workspace_id', '=', workspaceId)
    .where('threads.id', '=', threadId)
    .executeTakeFirst();
}

/**
 * Ends now the tokens of the visitor(s) behind a live chat contact on its widget (a token is
 * honoured only while `expires_at` is in the future); returns the handles whose token ended.
 */
export async function endVisitorTokens(db: Executor, visitor: { connectionId: number; contactId: number }, at: Date) {
  const rows = await db
    .updateTable('livechat_visitors')
    .set({ expires_at: at })
    .where('connection_id', '=', visitor.connectionId)
    .where('contact_id', '=', visitor.contactId)
    .where('expires_at', '>', at)
    .returning('handle')
    .execute();
  return rows.map((r) => r.handle);
}
