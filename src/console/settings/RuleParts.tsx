import { useEffect, useRef } from 'preact/hooks';
import type {
  Connection,
  Label,
  RuleAction,
  RuleCondition,
  RuleScalar,
  Team,
  TeamUser,
  WhatsappTemplate,
} from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { collect, useLoad } from '../shared/use-load';
import {
  ACTION_TITLES,
  type ActionDraft,
  type ActionType,
  blankAction,
  blankCondition,
  type ConditionDraft,
  FIELDS,
  fieldEntry,
  kindOf,
  OP_TITLES,
  opsOf,
  PRIORITIES,
  STATUSES,
  takesList,
  takesNoValue,
  withField,
} from './automation-model';

/*
 * The parts the rule editor and the macro editor share (docs/console.md, "Automation"): the
 * workspace's users, teams, connections, labels and templates to pick from, the list of
 * conditions, the list of actions, and the service's refusal shown beside the form.
 */

export interface Choices {
  users: TeamUser[];
  teams: Team[];
  connections: Connection[];
  labels: Label[];
  templates: (WhatsappTemplate & { key: string })[];
}

/** Everything a condition or an action may name, loaded once per page. */
export function useChoices() {
  const s = useStore(session)!;
  return useLoad(async (): Promise<Choices> => {
    const [users, teams, connections, labels] = await Promise.all([
      collect(s.client.users({ limit: 100 })),
      collect(s.client.teams({ limit: 100 })),
      collect(s.client.connections({ limit: 100 })),
      s.client.labels(),
    ]);
    // Templates are synced per WhatsApp connection; a reply names one by name and language.
    const synced = await Promise.all(
      connections.filter((c) => c.integrationKey === 'whatsapp').map((c) => s.client.templates(c.id).catch(() => [])),
    );
    const seen = new Set<string>();
    const templates = synced
      .flat()
      .map((t) => ({ ...t, key: `${t.name}|${t.language}` }))
      .filter((t) => !seen.has(t.key) && seen.add(t.key));
    return { users: users.filter((u) => u.active), teams, connections, labels, templates };
  });
}

const replace = <T,>(list: T[], i: number, item: T) => list.map((x, j) => (j === i ? item : x));

/** The labels the workspace uses, offered while a label is typed. */
export function LabelList({ id, labels }: { id: string; labels: Label[] }) {
  return (
    <datalist id={id}>
      {labels.map((l) => (
        <option key={l.name} value={l.name} />
      ))}
    </datalist>
  );
}

export function ConditionsEditor(props: { conditions: ConditionDraft[]; choices: Choices; onChange(c: ConditionDraft[]): void }) {
  const { conditions, choices, onChange } = props;
  return (
    <div class="rule-parts">
      {conditions.length === 0 && <p class="muted">No conditions: the rule acts on every conversation of its event.</p>}
      {conditions.map((c, i) => (
        <ConditionRow
          key={i}
          n={i + 1}
          condition={c}
          choices={choices}
          onChange={(next) => onChange(replace(conditions, i, next))}
          onRemove={() => onChange(conditions.filter((_, j) => j !== i))}
        />
      ))}
      {conditions.length < 20 && (
        <button type="button" class="add-part" onClick={() => onChange([...conditions, blankCondition()])}>
          Add condition
        </button>
      )}
    </div>
  );
}

const options = (items: { value: string; title: string }[]) =>
  items.map((o) => (
    <option key={o.value} value={o.value}>
      {o.title}
    </option>
  ));

/** What a picked field's value is chosen from; null for a value that is typed. */
function pickFrom(kind: ReturnType<typeof kindOf>, choices: Choices): { value: string; title: string }[] | null {
  switch (kind) {
    case 'connection':
      return choices.connections.map((c) => ({ value: String(c.id), title: c.name }));
    case 'integration':
      return [...new Set(choices.connections.map((c) => c.integrationKey))].map((k) => ({ value: k, title: k }));
    case 'team':
      return choices.teams.map((t) => ({ value: String(t.id), title: t.name }));
    case 'user':
      return choices.users.map((u) => ({ value: String(u.id), title: u.name }));
    case 'status':
      return STATUSES.map((v) => ({ value: v, title: v }));
    case 'priority':
      return PRIORITIES.map((v) => ({ value: v, title: v }));
    case 'boolean':
      return [
        { value: 'true', title: 'yes' },
        { value: 'false', title: 'no' },
      ];
    default:
      return null;
  }
}

function ConditionRow(props: {
  n: number;
  condition: ConditionDraft;
  choices: Choices;
  onChange(c: ConditionDraft): void;
  onRemove(): void;
}) {
  const { n, condition: c, choices, onChange } = props;
  const kind = kindOf(c.field);
  const picks = pickFrom(kind, choices);
  const listId = `condition-labels-${n}`;
  return (
    <fieldset class="rule-part">
      <legend>Condition {n}</legend>
      <label>
        Field
        <select value={fieldEntry(c.field)} onChange={(e) => onChange(withField(c, e.currentTarget.value))}>
          {options(FIELDS.map((f) => ({ value: f.field, title: f.title })))}
        </select>
      </label>
      {kind === 'attribute' && (
        <label>
          Attribute key
          <input
            required
            maxLength={100}
            value={c.field.slice('contact.attributes.'.length)}
            onInput={(e) => onChange({ ...c, field: `contact.attributes.${e.currentTarget.value}` })}
          />
        </label>
      )}
      <label>
        Comparison
        <select value={c.op} onChange={(e) => onChange({ ...c, op: e.currentTarget.value as ConditionDraft['op'] })}>
          {options(opsOf(c.field).map((op) => ({ value: op, title: OP_TITLES[op] })))}
        </select>
      </label>
      {takesNoValue(c.op) ? null : picks && takesList(c.op) ? (
        <label>
          Values
          <select
            multiple
            required
            size={Math.min(4, Math.max(2, picks.length))}
            onChange={(e) => onChange({ ...c, values: [...e.currentTarget.selectedOptions].map((o) => o.value) })}
          >
            {picks.map((o) => (
              <option key={o.value} value={o.value} selected={c.values.includes(o.value)}>
                {o.title}
              </option>
            ))}
          </select>
        </label>
      ) : picks ? (
        <label>
          Value
          <select required value={c.value} onChange={(e) => onChange({ ...c, value: e.currentTarget.value })}>
            <option value="">Choose…</option>
            {options(picks)}
          </select>
        </label>
      ) : (
        <label>
          {kind === 'label' && takesList(c.op) ? 'Labels (comma separated)' : 'Value'}
          <input
            required
            maxLength={500}
            list={kind === 'label' ? listId : undefined}
            value={c.value}
            onInput={(e) => onChange({ ...c, value: e.currentTarget.value })}
          />
          {kind === 'label' && <LabelList id={listId} labels={choices.labels} />}
        </label>
      )}
      <button type="button" class="remove-part" onClick={props.onRemove}>
        Remove condition {n}
      </button>
    </fieldset>
  );
}

export function ActionsEditor(props: { actions: ActionDraft[]; choices: Choices; onChange(a: ActionDraft[]): void }) {
  const { actions, choices, onChange } = props;
  return (
    <div class="rule-parts">
      {actions.map((a, i) => (
        <ActionRow
          key={i}
          n={i + 1}
          action={a}
          choices={choices}
          onChange={(next) => onChange(replace(actions, i, next))}
          onRemove={actions.length > 1 ? () => onChange(actions.filter((_, j) => j !== i)) : undefined}
        />
      ))}
      {actions.length < 10 && (
        <button type="button" class="add-part" onClick={() => onChange([...actions, blankAction()])}>
          Add action
        </button>
      )}
    </div>
  );
}

function ActionRow(props: { n: number; action: ActionDraft; choices: Choices; onChange(a: ActionDraft): void; onRemove?: () => void }) {
  const { n, action: a, choices, onChange } = props;
  const listId = `action-labels-${n}`;
  return (
    <fieldset class="rule-part">
      <legend>Action {n}</legend>
      <label>
        Action
        <select value={a.type} onChange={(e) => onChange({ ...a, type: e.currentTarget.value as ActionType })}>
          {options(Object.entries(ACTION_TITLES).map(([value, title]) => ({ value, title })))}
        </select>
      </label>
      {a.type === 'assign_user' && (
        <label>
          User
          <select required value={a.userId} onChange={(e) => onChange({ ...a, userId: e.currentTarget.value })}>
            <option value="">Choose…</option>
            {options(choices.users.map((u) => ({ value: String(u.id), title: u.name })))}
          </select>
        </label>
      )}
      {a.type === 'assign_team' && (
        <label>
          Team
          <select required value={a.teamId} onChange={(e) => onChange({ ...a, teamId: e.currentTarget.value })}>
            <option value="">Choose…</option>
            {options(choices.teams.map((t) => ({ value: String(t.id), title: t.name })))}
          </select>
        </label>
      )}
      {(a.type === 'add_labels' || a.type === 'remove_labels') && (
        <label>
          Labels (comma separated)
          <input required list={listId} value={a.labels} onInput={(e) => onChange({ ...a, labels: e.currentTarget.value })} />
          <LabelList id={listId} labels={choices.labels} />
        </label>
      )}
      {a.type === 'set_status' && (
        <>
          <label>
            Status
            <select value={a.status} onChange={(e) => onChange({ ...a, status: e.currentTarget.value as ActionDraft['status'] })}>
              {options(STATUSES.map((v) => ({ value: v, title: v })))}
            </select>
          </label>
          {a.status === 'snoozed' && (
            <label>
              Snooze for (minutes)
              <input
                type="number"
                required
                min={1}
                max={525600}
                value={a.snoozeMinutes}
                onInput={(e) => onChange({ ...a, snoozeMinutes: e.currentTarget.value })}
              />
            </label>
          )}
        </>
      )}
      {a.type === 'set_priority' && (
        <label>
          Priority
          <select value={a.priority} onChange={(e) => onChange({ ...a, priority: e.currentTarget.value as ActionDraft['priority'] })}>
            {options(PRIORITIES.map((v) => ({ value: v, title: v })))}
          </select>
        </label>
      )}
      {a.type === 'reply' && (
        <>
          <label>
            Reply with
            <select value={a.replyWith} onChange={(e) => onChange({ ...a, replyWith: e.currentTarget.value as ActionDraft['replyWith'] })}>
              <option value="text">Text</option>
              <option value="template" disabled={choices.templates.length === 0}>
                A WhatsApp template
              </option>
            </select>
          </label>
          {a.replyWith === 'text' ? (
            <label>
              Reply text (variables such as {'{{contact.name}}'} are filled in)
              <textarea
                required
                rows={3}
                maxLength={4096}
                value={a.text}
                onInput={(e) => onChange({ ...a, text: e.currentTarget.value })}
              />
            </label>
          ) : (
            <>
              <label>
                Template
                <select required value={a.template} onChange={(e) => onChange({ ...a, template: e.currentTarget.value })}>
                  <option value="">Choose…</option>
                  {options(choices.templates.map((t) => ({ value: t.key, title: `${t.name} (${t.language})` })))}
                </select>
              </label>
              <label>
                Template parameters (one a line)
                <textarea rows={2} value={a.parameters} onInput={(e) => onChange({ ...a, parameters: e.currentTarget.value })} />
              </label>
            </>
          )}
        </>
      )}
      {a.type === 'note' && (
        <label>
          Note text
          <textarea required rows={3} maxLength={4096} value={a.text} onInput={(e) => onChange({ ...a, text: e.currentTarget.value })} />
        </label>
      )}
      {props.onRemove && (
        <button type="button" class="remove-part" onClick={props.onRemove}>
          Remove action {n}
        </button>
      )}
    </fieldset>
  );
}

const nameIn = (list: { id: number; name: string }[], id: number) => list.find((x) => x.id === id)?.name ?? `#${id}`;

/** An action in words, for the lists: "add labels vip", "assign to the team Billing". */
export function describeAction(a: RuleAction, choices: Choices | null): string {
  switch (a.type) {
    case 'assign_user':
      return `assign to ${nameIn(choices?.users ?? [], a.userId)}`;
    case 'assign_team':
      return `assign to the team ${nameIn(choices?.teams ?? [], a.teamId)}`;
    case 'route':
      return 'route to an available agent';
    case 'add_labels':
      return `add labels ${a.labels.join(', ')}`;
    case 'remove_labels':
      return `remove labels ${a.labels.join(', ')}`;
    case 'set_status':
      return a.status === 'snoozed' ? `snooze for ${a.snoozeMinutes} min` : `set status ${a.status}`;
    case 'set_priority':
      return `set priority ${a.priority}`;
    case 'reply':
      return a.template ? `reply with the template ${a.template.name}` : 'reply';
    case 'note':
      return 'add a note';
    default:
      return 'act';
  }
}

/** A condition in words: "Contact e-mail contains “@vip.test”". */
export function describeCondition(c: RuleCondition, choices: Choices | null): string {
  const entry = FIELDS.find((f) => f.field === fieldEntry(c.field));
  const field = entry?.kind === 'attribute' ? `attribute ${c.field.slice('contact.attributes.'.length)}` : (entry?.title ?? c.field);
  if (c.value === undefined) return `${field} ${OP_TITLES[c.op]}`;
  const kind = kindOf(c.field);
  const word = (v: RuleScalar) =>
    kind === 'team'
      ? nameIn(choices?.teams ?? [], Number(v))
      : kind === 'user'
        ? nameIn(choices?.users ?? [], Number(v))
        : kind === 'connection'
          ? nameIn(choices?.connections ?? [], Number(v))
          : kind === 'boolean'
            ? v
              ? 'yes'
              : 'no'
            : `“${v}”`;
  return `${field} ${OP_TITLES[c.op]} ${Array.isArray(c.value) ? c.value.map(word).join(', ') : word(c.value)}`;
}

/** "Delete X?" in place of the Delete button; the focus lands on the answer that keeps it. */
export function ConfirmDelete({ name, onYes, onNo }: { name: string; onYes(): void; onNo(): void }) {
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => keep.current?.focus(), []);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons, not a form's fieldset
    <span class="confirm" role="group" aria-label={`Delete ${name}?`}>
      Delete {name}?{' '}
      <button type="button" onClick={onYes}>
        Yes, delete
      </button>
      <button type="button" ref={keep} onClick={onNo}>
        Keep
      </button>
    </span>
  );
}

/** A settings row's Edit and Delete buttons; Delete asks first, in place of the two. */
export function EditAndDelete(props: {
  /** The row's id (`macro-7`): the Edit button is `<id>-edit`, where the form gives the focus back. */
  id: string;
  name: string;
  /** False while the form's choices load. */
  canEdit: boolean;
  confirming: boolean;
  onEdit(): void;
  onAsk(): void;
  onDelete(): void;
  onKeep(): void;
}) {
  return (
    <>
      <button type="button" id={`${props.id}-edit`} aria-label={`Edit ${props.name}`} disabled={!props.canEdit} onClick={props.onEdit}>
        Edit
      </button>
      {props.confirming ? (
        <ConfirmDelete name={props.name} onYes={props.onDelete} onNo={props.onKeep} />
      ) : (
        <button type="button" aria-label={`Delete ${props.name}`} onClick={props.onAsk}>
          Delete
        </button>
      )}
    </>
  );
}
