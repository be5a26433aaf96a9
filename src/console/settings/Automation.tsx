import { useEffect, useRef, useState } from 'preact/hooks';
import type { AutomationRule, AutomationRuleCreate, RuleEvent, ThreadStatus } from '../../../packages/client/src/index';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, useLoad } from '../shared/use-load';
import { blankRule, type RuleDraft, ruleBody, ruleDraft, STATUSES } from './automation-model';
import { Failure, FormError } from './Failure';
import { InlineForm } from './InlineForm';
import { ActionsEditor, type Choices, ConditionsEditor, describeAction, describeCondition, EditAndDelete, useChoices } from './RuleParts';
import { useListEditor } from './use-list-editor';

const EVENTS: [RuleEvent, string][] = [
  ['message.created', 'A contact’s message arrives'],
  ['thread.created', 'A contact opens a new conversation'],
  ['thread.updated', 'An agent or the API changes a conversation'],
  ['thread.idle', 'A conversation has been quiet for a while'],
];
const eventTitle = (e: RuleEvent) => EVENTS.find(([k]) => k === e)?.[1] ?? e;

/**
 * Automation rules (docs/automation.md): the list in the order they run, each with its runs
 * and last error, switched on and off and moved with buttons; the editor builds a rule from
 * forms, and the service's refusal (a 422 naming the part) is shown beside it.
 */
export function Automation() {
  const s = useStore(session)!;
  const rules = useLoad(() => s.client.automationRules());
  const choices = useChoices();
  const setError = rules.setError;
  const editor = useListEditor<RuleDraft, AutomationRuleCreate>({
    noun: 'Rule',
    bodyOf: ruleBody,
    create: (body) => s.client.createAutomationRule(body),
    update: (id, body) => s.client.updateAutomationRule(id, body),
    remove: (id) => s.client.deleteAutomationRule(id),
    reload: rules.reload,
    setError,
  });
  const { editing, setSaved } = editor;
  const [refocus, setRefocus] = useState<string | null>(null);
  const list = rules.data ?? [];

  // After a move the row is elsewhere: the focus follows the button that moved it.
  useEffect(() => {
    if (!refocus) return;
    const button = document.getElementById(refocus) as HTMLButtonElement | null;
    const other = refocus.includes('-up-') ? refocus.replace('-up-', '-down-') : refocus.replace('-down-', '-up-');
    (button && !button.disabled ? button : document.getElementById(other))?.focus();
    setRefocus(null);
  }, [list, refocus]);

  /** Moves a rule one place: the positions become the list's order, and only the changed ones are sent. */
  async function move(rule: AutomationRule, by: -1 | 1) {
    const order = [...list];
    const from = order.findIndex((r) => r.id === rule.id);
    const to = from + by;
    if (to < 0 || to >= order.length) return;
    [order[from], order[to]] = [order[to]!, order[from]!];
    const changed = order.flatMap((r, position) => (r.position === position ? [] : [{ id: r.id, position }]));
    await attempt(() => Promise.all(changed.map((c) => s.client.updateAutomationRule(c.id, { position: c.position }))), setError);
    setSaved(`${rule.name} moved to place ${to + 1} of ${order.length}.`);
    await rules.reload();
    setRefocus(`rule-${by < 0 ? 'up' : 'down'}-${rule.id}`);
  }

  return (
    <>
      <Failure error={rules.error ?? choices.error} />
      {editor.saved && (
        <p role="status" class="muted">
          {editor.saved}
        </p>
      )}
      <p class="muted">
        Rules act on conversations when something happens, in the order below; each runs with the conversation as the rules before it left
        it. Changes a rule makes fire no rules.
      </p>
      {editing && choices.data ? (
        <RuleForm
          title={editing.id === null ? 'New rule' : `Edit ${list.find((r) => r.id === editing.id)?.name ?? 'rule'}`}
          draft={editing.draft}
          choices={choices.data}
          error={editor.formError}
          onChange={editor.change}
          onSubmit={(e) => void editor.save(e)}
          onCancel={editor.close}
        />
      ) : (
        <p>
          <button type="button" id="rule-new" class="primary" disabled={!choices.data} onClick={() => editor.open(null, blankRule())}>
            New rule
          </button>
        </p>
      )}

      <div class="list-head">
        <h3 id="rules-title">Rules, in the order they run</h3>
        {/* Runs and errors change as conversations come in; the list reads them again on demand. */}
        <button type="button" onClick={() => void rules.reload()}>
          Refresh
        </button>
      </div>
      {rules.data && list.length === 0 && <p class="empty">No rules yet.</p>}
      <ol class="settings-list" aria-labelledby="rules-title">
        {list.map((r, i) => (
          <li key={r.id}>
            <div>
              <strong>{r.name}</strong>
              {!r.enabled && <span class="muted"> (off)</span>}
              <p class="muted">
                {eventTitle(r.event)}
                {r.event === 'thread.idle' ? ` (${r.idleMinutes} min, ${(r.statuses ?? []).join(' or ')})` : ''}
                {r.conditions.length > 0 &&
                  ` · if ${r.conditions.map((c) => describeCondition(c, choices.data)).join(r.match === 'all' ? ' and ' : ' or ')}`}
                {` → ${r.actions.map((a) => describeAction(a, choices.data)).join(', ')}`}
              </p>
              <p class="muted rule-stats">
                Runs: {r.runs}
                {r.lastRunAt && <> · last run {fullTime(r.lastRunAt)}</>}
              </p>
              {r.lastError && <p class="error">Last error: {r.lastError}</p>}
            </div>
            <div class="row-actions">
              <label class="check">
                <input
                  type="checkbox"
                  aria-label={`Enabled: ${r.name}`}
                  checked={r.enabled}
                  onChange={(e) => {
                    const enabled = e.currentTarget.checked;
                    void attempt(() => s.client.updateAutomationRule(r.id, { enabled }), setError).then(rules.reload);
                  }}
                />{' '}
                Enabled
              </label>
              <button
                type="button"
                id={`rule-up-${r.id}`}
                aria-label={`Move ${r.name} up`}
                disabled={i === 0}
                onClick={() => void move(r, -1)}
              >
                ↑
              </button>
              <button
                type="button"
                id={`rule-down-${r.id}`}
                aria-label={`Move ${r.name} down`}
                disabled={i === list.length - 1}
                onClick={() => void move(r, 1)}
              >
                ↓
              </button>
              <EditAndDelete
                id={`rule-${r.id}`}
                name={r.name}
                canEdit={Boolean(choices.data)}
                confirming={editor.confirming === r.id}
                onEdit={() => editor.open(r.id, ruleDraft(r))}
                onAsk={() => editor.setConfirming(r.id)}
                onDelete={() => void editor.remove(r)}
                onKeep={() => editor.setConfirming(null)}
              />
            </div>
          </li>
        ))}
      </ol>
    </>
  );
}

function RuleForm(props: {
  title: string;
  draft: RuleDraft;
  choices: Choices;
  error: string | null;
  onChange(d: RuleDraft): void;
  onSubmit(e: Event): void;
  onCancel(): void;
}) {
  const { draft: d, choices, onChange } = props;
  const nameRef = useRef<HTMLInputElement>(null);
  // The form opens where the rule starts: its name.
  useEffect(() => nameRef.current?.focus(), []);
  const toggleStatus = (status: ThreadStatus, on: boolean) =>
    onChange({ ...d, statuses: on ? [...d.statuses, status] : d.statuses.filter((x) => x !== status) });
  return (
    <InlineForm
      class="settings-form rule-form"
      labelledBy="rule-form-title"
      save="Save rule"
      onSubmit={props.onSubmit}
      onCancel={props.onCancel}
    >
      <h3 id="rule-form-title">{props.title}</h3>
      <FormError error={props.error} />
      <label>
        Rule name
        <input required maxLength={100} value={d.name} ref={nameRef} onInput={(e) => onChange({ ...d, name: e.currentTarget.value })} />
      </label>
      <label>
        When
        <select value={d.event} onChange={(e) => onChange({ ...d, event: e.currentTarget.value as RuleEvent })}>
          {EVENTS.map(([value, title]) => (
            <option key={value} value={value}>
              {title}
            </option>
          ))}
        </select>
      </label>
      {d.event === 'thread.idle' && (
        <>
          <label>
            Quiet for (minutes, at least 5)
            <input
              type="number"
              required
              min={5}
              max={525600}
              value={d.idleMinutes}
              onInput={(e) => onChange({ ...d, idleMinutes: e.currentTarget.value })}
            />
          </label>
          <fieldset>
            <legend>While the status is</legend>
            {STATUSES.map((st) => (
              <label class="check" key={st}>
                <input type="checkbox" checked={d.statuses.includes(st)} onChange={(e) => toggleStatus(st, e.currentTarget.checked)} /> {st}
              </label>
            ))}
          </fieldset>
        </>
      )}
      <h4>Conditions</h4>
      <label>
        Match
        <select value={d.match} onChange={(e) => onChange({ ...d, match: e.currentTarget.value as RuleDraft['match'] })}>
          <option value="all">All conditions</option>
          <option value="any">Any condition</option>
        </select>
      </label>
      <ConditionsEditor conditions={d.conditions} choices={choices} onChange={(conditions) => onChange({ ...d, conditions })} />
      <h4>Actions</h4>
      <ActionsEditor actions={d.actions} choices={choices} onChange={(actions) => onChange({ ...d, actions })} />
      <label class="check">
        <input type="checkbox" checked={d.enabled} onChange={(e) => onChange({ ...d, enabled: e.currentTarget.checked })} /> Enabled
      </label>
    </InlineForm>
  );
}
