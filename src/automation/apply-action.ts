import { fillVariables } from '../canned-responses/variables.js';
import type { Executor } from '../db/database.js';
import type { RuleAction } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { postReplyIn } from '../replies/replies.service.js';
import { assigneeLine, autoAssignedLine } from '../threads/activity.js';
import { routeThreadNow } from '../threads/routing.js';
import { lockThread } from '../threads/thread-workflow.queries.js';
import { changeThreadIn, type ThreadActor } from '../threads/thread-workflow.service.js';
import { variableSources } from './automation-rules.queries.js';

const MINUTE = 60_000;

/** A reply's or note's text with its canned-response variables filled in for this thread. */
async function filled(trx: Executor, actor: ThreadActor, threadId: number, text: string) {
  if (!text.includes('{{')) return text;
  // A person running a macro is its agent; a rule speaks for the thread's assignee.
  const agentId = actor.kind === 'user' || actor.kind === 'pat' ? actor.userId : null;
  const src = await variableSources(trx, threadId, agentId);
  if (!src) throw errors.notFound('thread');
  return fillVariables(text, {
    contact: { name: src.contact_name, email: src.contact_email, attributes: src.contact_attributes },
    agent: src.agent_name === null ? null : { name: src.agent_name },
    workspace: { name: src.workspace_name },
  });
}

/**
 * One action of a rule or a macro on a thread, through the code the API runs for the same
 * change (docs/automation.md): its checks, activity lines naming `actor`, events and jobs,
 * all in the caller's transaction.
 */
export async function applyAction(deps: Deps, trx: Executor, actor: ThreadActor, threadId: number, action: RuleAction, now: Date) {
  switch (action.type) {
    case 'assign_user':
      return void (await changeThreadIn(deps, trx, actor, threadId, { assigneeId: action.userId }));
    case 'assign_team':
      return void (await changeThreadIn(deps, trx, actor, threadId, { teamId: action.teamId }));
    case 'set_priority':
      return void (await changeThreadIn(deps, trx, actor, threadId, { priority: action.priority }));
    case 'set_status':
      return void (await changeThreadIn(deps, trx, actor, threadId, {
        status: action.status,
        snoozedUntil:
          action.status === 'snoozed' ? new Date(now.getTime() + (action.snoozeMinutes ?? 60) * MINUTE).toISOString() : undefined,
      }));
    case 'add_labels':
    case 'remove_labels': {
      const thread = await lockThread(trx, actor, threadId);
      if (!thread) throw errors.notFound('thread');
      const labels =
        action.type === 'add_labels' ? [...thread.labels, ...action.labels] : thread.labels.filter((l) => !action.labels.includes(l));
      return void (await changeThreadIn(deps, trx, actor, threadId, { labels }));
    }
    case 'route': {
      const thread = await lockThread(trx, actor, threadId);
      if (!thread) throw errors.notFound('thread');
      if (thread.assignee_id !== null) return;
      const line = actor.kind === 'automation' ? (name: string) => assigneeLine(actor.name, name, null) : autoAssignedLine;
      await routeThreadNow(deps, trx, thread, line, now);
      return;
    }
    case 'reply':
      await postReplyIn(deps, trx, {
        auth: actor,
        threadId,
        ...(action.template ? { template: action.template } : { text: await filled(trx, actor, threadId, action.text ?? '') }),
        private: false,
      });
      return;
    case 'note':
      await postReplyIn(deps, trx, { auth: actor, threadId, text: await filled(trx, actor, threadId, action.text), private: true });
      return;
  }
}
