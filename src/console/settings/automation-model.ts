import type {
  AutomationRule,
  AutomationRuleCreate,
  ConditionOp,
  RuleAction,
  RuleCondition,
  RuleEvent,
  RuleScalar,
  ThreadPriority,
  ThreadStatus,
} from '../../../packages/client/src/index.js';

/*
 * The rule and macro editors' forms as plain data (docs/automation.md): what each field a
 * condition reads is, the ops that make sense for it, and the conversion between the forms'
 * strings and the service's conditions and actions. Pure, no Preact.
 */

/** What a condition's value is picked from. */
export type FieldKind = 'text' | 'connection' | 'integration' | 'status' | 'priority' | 'label' | 'team' | 'user' | 'boolean' | 'attribute';

export const ATTRIBUTE_PREFIX = 'contact.attributes.';

export const STATUSES: ThreadStatus[] = ['open', 'pending', 'resolved', 'snoozed'];
export const PRIORITIES: ThreadPriority[] = ['low', 'normal', 'high', 'urgent'];

const PICKED: ConditionOp[] = ['eq', 'neq', 'in', 'not_in'];
const MAYBE: ConditionOp[] = ['is_set', 'is_not_set'];
const WORDS: ConditionOp[] = ['contains', 'not_contains', 'starts_with', 'eq', 'neq'];
const OPS: Record<FieldKind, ConditionOp[]> = {
  text: [...WORDS, ...MAYBE],
  connection: PICKED,
  integration: PICKED,
  status: PICKED,
  priority: [...PICKED, 'gt', 'lt'],
  label: [...PICKED, ...MAYBE],
  team: [...PICKED, ...MAYBE],
  user: [...PICKED, ...MAYBE],
  boolean: ['eq'],
  attribute: [...WORDS, 'gt', 'lt', ...MAYBE],
};

/** The fields a condition reads, in the order the editor offers them. */
export const FIELDS: { field: string; title: string; kind: FieldKind }[] = [
  { field: 'contact.email', title: 'Contact e-mail', kind: 'text' },
  { field: 'contact.name', title: 'Contact name', kind: 'text' },
  { field: ATTRIBUTE_PREFIX, title: 'Contact attribute', kind: 'attribute' },
  { field: 'text', title: 'Message text', kind: 'text' },
  { field: 'connectionId', title: 'Connection', kind: 'connection' },
  { field: 'integrationKey', title: 'Channel', kind: 'integration' },
  { field: 'status', title: 'Status', kind: 'status' },
  { field: 'priority', title: 'Priority', kind: 'priority' },
  { field: 'labels', title: 'Labels', kind: 'label' },
  { field: 'teamId', title: 'Team', kind: 'team' },
  { field: 'assigneeId', title: 'Assignee', kind: 'user' },
  { field: 'insideBusinessHours', title: 'Inside business hours', kind: 'boolean' },
];

export const OP_TITLES: Record<ConditionOp, string> = {
  eq: 'is',
  neq: 'is not',
  in: 'is one of',
  not_in: 'is none of',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  is_set: 'is set',
  is_not_set: 'is not set',
  gt: 'is greater than',
  lt: 'is less than',
};

/** The select's entry for a field: every `contact.attributes.<key>` is one entry. */
export const fieldEntry = (field: string) => (field.startsWith(ATTRIBUTE_PREFIX) ? ATTRIBUTE_PREFIX : field);
export const kindOf = (field: string): FieldKind => FIELDS.find((f) => f.field === fieldEntry(field))?.kind ?? 'text';
export const opsOf = (field: string): ConditionOp[] => OPS[kindOf(field)];
export const takesNoValue = (op: ConditionOp) => op === 'is_set' || op === 'is_not_set';
export const takesList = (op: ConditionOp) => op === 'in' || op === 'not_in';

/** A condition as the form holds it: the value as typed or picked, a list for `in`. */
export interface ConditionDraft {
  field: string;
  op: ConditionOp;
  value: string;
  values: string[];
}

export const blankCondition = (field = FIELDS[0]!.field): ConditionDraft => ({ field, op: opsOf(field)[0]!, value: '', values: [] });

export function conditionDraft(c: RuleCondition): ConditionDraft {
  const list = Array.isArray(c.value) ? c.value.map(String) : [];
  // A label list is edited as typed text, the other lists as picked options.
  const value = Array.isArray(c.value)
    ? kindOf(c.field) === 'label'
      ? list.join(', ')
      : ''
    : c.value === undefined
      ? ''
      : String(c.value);
  return { field: c.field, op: c.op, value, values: list };
}

/** A field changed: the op and value start over, from what that field takes. */
export function withField(d: ConditionDraft, field: string): ConditionDraft {
  return fieldEntry(field) === fieldEntry(d.field) ? { ...d, field } : blankCondition(field);
}

/** The value as the service compares it: ids and numbers as numbers, yes/no as booleans. */
function scalar(kind: FieldKind, op: ConditionOp, text: string): RuleScalar {
  const t = text.trim();
  if (kind === 'connection' || kind === 'team' || kind === 'user') return Number(t);
  if (kind === 'boolean') return t === 'true';
  // An attribute compared by size is a number when it reads as one; else the service says why not.
  if (kind === 'attribute' && (op === 'gt' || op === 'lt') && t !== '' && Number.isFinite(Number(t))) return Number(t);
  return t;
}

export function conditionOf(d: ConditionDraft): RuleCondition {
  const kind = kindOf(d.field);
  if (takesNoValue(d.op)) return { field: d.field, op: d.op };
  if (takesList(d.op)) {
    // A label list is typed, comma separated; the other lists are picked.
    const items = kind === 'label' ? splitList(d.value) : d.values;
    return { field: d.field, op: d.op, value: items.map((v) => scalar(kind, d.op, v)) };
  }
  return { field: d.field, op: d.op, value: scalar(kind, d.op, d.value) };
}

export const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

export type ActionType = RuleAction['type'];
export const ACTION_TITLES: Record<ActionType, string> = {
  add_labels: 'Add labels',
  remove_labels: 'Remove labels',
  assign_team: 'Assign to a team',
  assign_user: 'Assign to a user',
  route: 'Route to an available agent',
  set_status: 'Set status',
  set_priority: 'Set priority',
  reply: 'Reply to the contact',
  note: 'Add a private note',
};

/** An action as the form holds it: every parameter as text, only those of `type` used. */
export interface ActionDraft {
  type: ActionType;
  userId: string;
  teamId: string;
  labels: string;
  status: ThreadStatus;
  snoozeMinutes: string;
  priority: ThreadPriority;
  text: string;
  /** A reply's text or a template (`name|language`) with its body parameters, one a line. */
  replyWith: 'text' | 'template';
  template: string;
  parameters: string;
}

export const blankAction = (type: ActionType = 'add_labels'): ActionDraft => ({
  type,
  userId: '',
  teamId: '',
  labels: '',
  status: 'resolved',
  snoozeMinutes: '60',
  priority: 'high',
  text: '',
  replyWith: 'text',
  template: '',
  parameters: '',
});

export function actionDraft(a: RuleAction): ActionDraft {
  const d = blankAction(a.type);
  switch (a.type) {
    case 'assign_user':
      return { ...d, userId: String(a.userId) };
    case 'assign_team':
      return { ...d, teamId: String(a.teamId) };
    case 'add_labels':
    case 'remove_labels':
      return { ...d, labels: a.labels.join(', ') };
    case 'set_status':
      return { ...d, status: a.status, snoozeMinutes: a.snoozeMinutes === undefined ? d.snoozeMinutes : String(a.snoozeMinutes) };
    case 'set_priority':
      return { ...d, priority: a.priority };
    case 'note':
      return { ...d, text: a.text };
    case 'reply':
      return a.template
        ? {
            ...d,
            replyWith: 'template',
            template: `${a.template.name}|${a.template.language}`,
            parameters: (a.template.parameters?.body ?? []).join('\n'),
          }
        : { ...d, text: a.text ?? '' };
    default:
      return d;
  }
}

export function actionOf(d: ActionDraft): RuleAction {
  switch (d.type) {
    case 'assign_user':
      return { type: d.type, userId: Number(d.userId) };
    case 'assign_team':
      return { type: d.type, teamId: Number(d.teamId) };
    case 'add_labels':
    case 'remove_labels':
      return { type: d.type, labels: splitList(d.labels) };
    case 'set_status':
      return d.status === 'snoozed'
        ? { type: d.type, status: d.status, snoozeMinutes: Number(d.snoozeMinutes) }
        : { type: d.type, status: d.status };
    case 'set_priority':
      return { type: d.type, priority: d.priority };
    case 'note':
      return { type: d.type, text: d.text };
    case 'reply': {
      if (d.replyWith === 'text') return { type: d.type, text: d.text };
      const [name = '', language = ''] = d.template.split('|');
      const body = d.parameters.split('\n').filter((line) => line.trim() !== '');
      return { type: d.type, template: { name, language, parameters: { body } } };
    }
    default:
      return { type: 'route' };
  }
}

/** What an open rule form holds. */
export interface RuleDraft {
  name: string;
  event: RuleEvent;
  match: 'all' | 'any';
  enabled: boolean;
  idleMinutes: string;
  statuses: ThreadStatus[];
  conditions: ConditionDraft[];
  actions: ActionDraft[];
}

export const blankRule = (): RuleDraft => ({
  name: '',
  event: 'message.created',
  match: 'all',
  enabled: true,
  idleMinutes: '60',
  statuses: ['pending'],
  conditions: [],
  actions: [blankAction()],
});

export const ruleDraft = (r: AutomationRule): RuleDraft => ({
  name: r.name,
  event: r.event,
  match: r.match,
  enabled: r.enabled,
  idleMinutes: String(r.idleMinutes ?? 60),
  statuses: r.statuses ?? ['pending'],
  conditions: r.conditions.map(conditionDraft),
  actions: r.actions.map(actionDraft),
});

export function ruleBody(d: RuleDraft): AutomationRuleCreate {
  const idle = d.event === 'thread.idle';
  return {
    name: d.name,
    event: d.event,
    match: d.match,
    enabled: d.enabled,
    conditions: d.conditions.map(conditionOf),
    actions: d.actions.map(actionOf),
    idleMinutes: idle ? Number(d.idleMinutes) : null,
    statuses: idle ? d.statuses : null,
  };
}
