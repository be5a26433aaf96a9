import type { Executor } from '../db/database.js';
import { type ThreadReader, visibleThreads } from '../threads/visibility.js';

/** A thread the reader sees, with its channel; undefined for any other. */
export async function findThreadChannel(db: Executor, reader: ThreadReader, threadId: number) {
  return db
    .selectFrom('threads')
    .innerJoin('connections', 'connections.id', 'threads.connection_id')
    .select(['threads.id', 'threads.contact_id', 'threads.connection_id', 'connections.integration_key'])
    .where('threads.workspace_id', '=', reader.workspaceId)
    .where('threads.id', '=', threadId)
    .where(visibleThreads(reader))
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

/**
 * Ends now the tokens of every visitor of a widget (its connection was deleted); returns the
 * handles whose token ended, so their sockets can be closed.
 */
export async function endWidgetVisitorTokens(db: Executor, connectionId: number, at: Date) {
  const rows = await db
    .updateTable('livechat_visitors')
    .set({ expires_at: at })
    .where('connection_id', '=', connectionId)
    .where('expires_at', '>', at)
    .returning('handle')
    .execute();
  return rows.map((r) => r.handle);
}
