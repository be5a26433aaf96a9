import type { Static } from 'typebox';
import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import { isAdmin, type TenantAuth } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { lockThread } from '../threads/thread-workflow.queries.js';
import { findThreadViews } from '../threads/threads.queries.js';
import { threadResource } from '../threads/threads.resources.js';
import { applyAction } from './apply-action.js';
import { deleteMacro, findMacro, insertMacro, updateMacro } from './macros.queries.js';
import { type MacroCreate, type MacroPatch, macroResource } from './macros.resources.js';
import { checkActions } from './rule-actions.js';
import { runRules } from './run-rules.js';

const userOf = (auth: TenantAuth) => (auth.kind === 'api_key' ? null : auth.userId);
/** What the audit log shows of a macro (docs/security.md). */
const audited = (m: { name: string; actions: unknown; shared: boolean }) => ({ name: m.name, actions: m.actions, shared: m.shared });

export async function createMacro(deps: Deps, auth: TenantAuth, trail: Trail, body: Static<typeof MacroCreate>) {
  const name = body.name.trim();
  if (name.length === 0) throw errors.validation('name: must not be blank');
  return deps.db.transaction().execute(async (trx) => {
    const actions = await checkActions(trx, auth.workspaceId, body.actions);
    const row = await insertMacro(
      trx,
      { workspaceId: auth.workspaceId, name, actions, shared: body.shared ?? true, authorId: userOf(auth) },
      deps.now(),
    );
    await recordAudit(trx, trail, 'macro.created', { type: 'macro', id: row.id }, changesOf(null, audited(row)));
    return macroResource(row);
  });
}

/** The macro the caller may change: their own, or any they see if they are an admin. */
async function ownMacro(trx: Parameters<typeof findMacro>[0], auth: TenantAuth, id: number) {
  const macro = await findMacro(trx, auth.workspaceId, id, userOf(auth));
  if (!macro) throw errors.notFound('macro');
  if (!isAdmin(auth) && macro.author_id !== userOf(auth)) throw errors.forbidden('only its author or an admin changes a macro');
  return macro;
}

export async function changeMacro(deps: Deps, auth: TenantAuth, trail: Trail, id: number, patch: Static<typeof MacroPatch>) {
  return deps.db.transaction().execute(async (trx) => {
    const current = await ownMacro(trx, auth, id);
    const name = (patch.name ?? current.name).trim();
    if (name.length === 0) throw errors.validation('name: must not be blank');
    const actions = patch.actions ? await checkActions(trx, auth.workspaceId, patch.actions) : current.actions;
    const row = await updateMacro(trx, auth.workspaceId, id, { name, actions, shared: patch.shared ?? current.shared }, deps.now());
    if (!row) throw errors.notFound('macro');
    await recordAudit(trx, trail, 'macro.updated', { type: 'macro', id }, changesOf(audited(current), audited(row)));
    return macroResource(row);
  });
}

export async function removeMacro(deps: Deps, auth: TenantAuth, trail: Trail, id: number) {
  await deps.db.transaction().execute(async (trx) => {
    await ownMacro(trx, auth, id);
    await deleteMacro(trx, auth.workspaceId, id);
    await recordAudit(trx, trail, 'macro.deleted', { type: 'macro', id });
  });
}

const stateOf = (t: { status: string; assignee_id: number | null; team_id: number | null; priority: string; labels: string[] }) =>
  JSON.stringify([t.status, t.assignee_id, t.team_id, t.priority, t.labels]);

/**
 * `POST /v1/threads/:id/macros/:macroId/run`: the macro's actions in order, as the caller, in
 * one transaction: any that fails fails the run and nothing is written. A change it made
 * fires `thread.updated` rules, as the same change through PATCH would. Answers the thread.
 */
export async function runMacro(deps: Deps, auth: TenantAuth, threadId: number, macroId: number) {
  return deps.db.transaction().execute(async (trx) => {
    // The thread first, as the caller sees it: one they may not see is not found, whatever the macro.
    if (!(await lockThread(trx, auth, threadId))) throw errors.notFound('thread');
    const macro = await findMacro(trx, auth.workspaceId, macroId, userOf(auth));
    if (!macro) throw errors.notFound('macro');
    const [before] = await findThreadViews(trx, [threadId]);
    if (!before) throw errors.notFound('thread');
    const now = deps.now();
    for (const action of macro.actions) await applyAction(deps, trx, auth, threadId, action, now);
    const [changed] = await findThreadViews(trx, [threadId]);
    if (changed && stateOf(changed) !== stateOf(before))
      await runRules(deps, trx, [{ event: 'thread.updated', workspaceId: auth.workspaceId, threadId, text: null }], now);
    const [after] = await findThreadViews(trx, [threadId]);
    return threadResource(after!);
  });
}
