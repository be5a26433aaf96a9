import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import { signedUrls } from '../attachments/attachments.resources.js';
import { messageResources } from '../attachments/message-attachments.js';
import type { MessagesTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import type { MessageResource } from '../messaging/messaging.resources.js';

/**
 * Messages as a visitor sees them: the Message shape of every route, without `error`, which
 * holds the sender's side of a failure (a database's or a worker's words), not the visitor's,
 * and without `authorId`, which names the workspace's user. A visitor has no credential for
 * the content route, so each attachment's `url` is a signed link (docs/attachments.md).
 */
export async function visitorMessages(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey' | 'now'>,
  rows: readonly Selectable<MessagesTable>[],
): Promise<Static<typeof MessageResource>[]> {
  const messages = await messageResources(deps.db, rows, signedUrls(deps));
  return messages.map((m) => ({
    ...m,
    error: null,
    authorId: null,
    attachments: m.attachments.map((a) => ({ ...a, error: a.error === null ? null : 'could not be fetched' })),
  }));
}
