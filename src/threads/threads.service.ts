import type { AttachmentUrl } from '../attachments/attachments.resources.js';
import { messageResources } from '../attachments/message-attachments.js';
import type { Executor } from '../db/database.js';
import { errors } from '../http/errors.js';
import { type CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { findThread, listMessages } from './threads.queries.js';
import type { ThreadReader } from './visibility.js';

/**
 * A thread's messages, one cursor page, or `not_found` when the reader sees no such thread:
 * the tenant's own list and the operator's transcript are the same read.
 */
export async function transcriptPage(db: Executor, reader: ThreadReader, threadId: number, query: CursorQuery, url: AttachmentUrl) {
  const thread = await findThread(db, reader, threadId);
  if (!thread) throw errors.notFound('thread');
  const page = await listMessages(db, thread.id, parseCursorQuery(query));
  return { items: await messageResources(db, page.items, url), meta: page.meta };
}
