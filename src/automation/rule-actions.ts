import { workspaceHasTemplate } from '../connections/templates.queries.js';
import type { Executor } from '../db/database.js';
import type { RuleAction } from '../db/types.js';
import { errors } from '../http/errors.js';
import { requireTeamOf } from '../teams/teams.service.js';
import { findAssignableUser } from '../threads/thread-workflow.queries.js';
import { normaliseLabels } from '../threads/thread-workflow.service.js';

/**
 * The actions of a rule or a macro as stored, or a 422 naming the first that is wrong: a
 * user, team or template that does not exist here is refused at save (docs/automation.md).
 */
export async function checkActions(db: Executor, workspaceId: number, actions: RuleAction[], field = 'actions'): Promise<RuleAction[]> {
  const out: RuleAction[] = [];
  for (const [i, action] of actions.entries()) {
    const at = `${field}[${i}]`;
    switch (action.type) {
      case 'assign_user':
        if (!(await findAssignableUser(db, workspaceId, action.userId)))
          throw errors.validation(`${at}.userId: ${action.userId} is not an active user of this workspace`);
        out.push(action);
        break;
      case 'assign_team':
        await requireTeamOf(db, workspaceId, action.teamId, `${at}.teamId`);
        out.push(action);
        break;
      case 'add_labels':
      case 'remove_labels':
        out.push({ type: action.type, labels: normaliseLabels(action.labels) });
        break;
      case 'set_status':
        if (action.status === 'snoozed' && action.snoozeMinutes === undefined)
          throw errors.validation(`${at}.snoozeMinutes: status "snoozed" needs how many minutes`);
        if (action.status !== 'snoozed' && action.snoozeMinutes !== undefined)
          throw errors.validation(`${at}.snoozeMinutes: applies to status "snoozed" only`);
        out.push(action);
        break;
      case 'reply':
        if ((action.text === undefined) === (action.template === undefined))
          throw errors.validation(`${at}: a reply has either text or a template`);
        if (action.template && !(await workspaceHasTemplate(db, workspaceId, action.template.name, action.template.language)))
          throw errors.validation(
            `${at}.template: "${action.template.name}" (${action.template.language}) is not a synced template of this workspace`,
          );
        out.push(action);
        break;
      default:
        out.push(action);
    }
  }
  return out;
}
