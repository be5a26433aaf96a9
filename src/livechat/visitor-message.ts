import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import type { MessagesTable } from '../db/types.js';
import { type MessageResource, messageResource } from '../messaging/messaging.resources.js';

/**
 * A message as a visitor sees it: the Message shape of every route, without `error`, which
 * holds the sender's side of a failure (a database's or a worker's words), not the visitor's,
 * and without `authorId`, which names the workspace's user.
 */
export function visitorMessage(row: Selectable<MessagesTable>): Static<typeof MessageResource> {
  return { ...messageResource(row), error: null, authorId: null };
}
