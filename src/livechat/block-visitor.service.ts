import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import type { ThreadReader } from '../threads/visibility.js';
import { endVisitorTokens, findThreadChannel } from './block-visitor.queries.js';
import { publishVisitorEvents } from './visitor-events.js';

/**
 * An agent blocks the visitor of a live chat thread: its token stops working at once (the
 * next POST is 401) and, once this commits, every api process closes the sockets it holds of
 * that visitor (`visitor.blocked` on the visitors' bus, 4003). A thread of another workspace
 * or one the caller does not see is 404; a thread of another channel has no visitor to block (422).
 */
export async function blockVisitor(deps: Deps, reader: ThreadReader, threadId: number) {
  return deps.db.transaction().execute(async (trx) => {
    const thread = await findThreadChannel(trx, reader, threadId);
    if (!thread) throw errors.notFound('thread');
    if (thread.integration_key !== 'livechat') throw errors.validation('only a live chat thread has a visitor to block');
    const handles = await endVisitorTokens(trx, { connectionId: thread.connection_id, contactId: thread.contact_id }, deps.now());
    await publishVisitorEvents(
      trx,
      handles.map((visitor) => ({ type: 'visitor.blocked' as const, visitor })),
    );
    return { threadId: thread.id, visitorsBlocked: handles.length };
  });
}
