import type { TenantAuth } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { changeThreadTold, type ThreadPatch } from '../threads/thread-workflow.service.js';
import { findThreadViews } from '../threads/threads.queries.js';
import { threadResource } from '../threads/threads.resources.js';
import { runRules } from './run-rules.js';

/**
 * `PATCH /v1/threads/:id` with the rules it fires: a change that changed something fires
 * `thread.updated` in its own transaction (docs/automation.md). The answer is the thread as
 * the rules left it.
 */
export async function changeThreadWithRules(deps: Deps, auth: TenantAuth, threadId: number, patch: ThreadPatch) {
  return deps.db.transaction().execute(async (trx) => {
    const { thread, changed } = await changeThreadTold(deps, trx, auth, threadId, patch);
    if (!changed) return thread;
    const now = deps.now();
    await runRules(deps, trx, [{ event: 'thread.updated', workspaceId: auth.workspaceId, threadId, text: null }], now);
    const [view] = await findThreadViews(trx, [threadId]);
    return view ? threadResource(view) : thread;
  });
}
