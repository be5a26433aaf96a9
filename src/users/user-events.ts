import type { Executor } from '../db/database.js';
import { publishEvents } from '../realtime/publish.js';
import { findUserViews } from './users.queries.js';
import { teamUserResource } from './users.resources.js';

/**
 * Announces `user.updated` (data = the User, `connected` as of `at`) to each user's workspace,
 * in the caller's transaction: the one way a change of a user is told to the sockets.
 */
export async function announceUsers(db: Executor, userIds: number[], at: Date): Promise<void> {
  const views = await findUserViews(db, [...new Set(userIds)], at);
  await publishEvents(
    db,
    views.map((v) => ({ type: 'user.updated', workspaceId: v.workspace_id, data: teamUserResource(v) })),
  );
}
