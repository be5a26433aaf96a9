import { useEffect, useRef, useState } from 'preact/hooks';
import type { Macro, MacroCreate } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, useLoad } from '../shared/use-load';
import { type ActionDraft, actionDraft, actionOf, blankAction } from './automation-model';
import { Failure } from './Failure';
import { ActionsEditor, type Choices, ConfirmDelete, describeAction, FormError, useChoices } from './RuleParts';

interface MacroDraft {
  name: string;
  shared: boolean;
  actions: ActionDraft[];
}

const blankMacro = (): MacroDraft => ({ name: '', shared: true, actions: [blankAction('reply')] });
const draftOf = (m: Macro): MacroDraft => ({ name: m.name, shared: m.shared, actions: m.actions.map(actionDraft) });
const bodyOf = (d: MacroDraft): MacroCreate => ({ name: d.name, shared: d.shared, actions: d.actions.map(actionOf) });

/**
 * Macros (docs/automation.md): actions an agent runs on a conversation from its header, built
 * with the rule editor's action list. Shared ones are everyone's; personal ones their author's.
 */
export function Macros() {
  const s = useStore(session)!;
  const macros = useLoad(() => s.client.macros());
  const choices = useChoices();
  const [editing, setEditing] = useState<{ id: number | null; draft: MacroDraft } | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const nameOf = (id: number | null) => choices.data?.users.find((u) => u.id === id)?.name ?? 'someone';

  function open(id: number | null, draft: MacroDraft) {
    setFormError(null);
    setSaved(null);
    setEditing({ id, draft });
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!editing) return;
    const body = bodyOf(editing.draft);
    try {
      if (editing.id === null) await s.client.createMacro(body);
      else await s.client.updateMacro(editing.id, body);
    } catch (err) {
      setFormError(errorText(err));
      return;
    }
    setEditing(null);
    setSaved(`Macro ${body.name} saved.`);
    await macros.reload();
  }

  async function remove(m: Macro) {
    setConfirming(null);
    if (await attempt(() => s.client.deleteMacro(m.id), macros.setError)) setSaved(`Macro ${m.name} deleted.`);
    await macros.reload();
  }

  return (
    <>
      <Failure error={macros.error ?? choices.error} />
      {saved && (
        <p role="status" class="muted">
          {saved}
        </p>
      )}
      <p class="muted">Agents run a macro from a conversation's header: its actions in order, as the agent who runs it.</p>
      {editing && choices.data ? (
        <MacroForm
          title={editing.id === null ? 'New macro' : `Edit ${editing.draft.name || 'macro'}`}
          draft={editing.draft}
          choices={choices.data}
          error={formError}
          onChange={(draft) => setEditing({ ...editing, draft })}
          onSubmit={(e) => void save(e)}
          onCancel={() => setEditing(null)}
        />
      ) : (
        <p>
          <button type="button" class="primary" disabled={!choices.data} onClick={() => open(null, blankMacro())}>
            New macro
          </button>
        </p>
      )}
      {macros.data && macros.data.length === 0 && <p class="empty">No macros yet.</p>}
      <ul class="settings-list" aria-label="Macros">
        {(macros.data ?? []).map((m) => (
          <li key={m.id}>
            <div>
              <strong>{m.name}</strong>
              <p class="muted">
                {m.shared ? 'Shared' : `Personal (${nameOf(m.authorId)})`} ·{' '}
                {m.actions.map((a) => describeAction(a, choices.data)).join(', ')}
              </p>
            </div>
            <div class="row-actions">
              <button type="button" aria-label={`Edit ${m.name}`} disabled={!choices.data} onClick={() => open(m.id, draftOf(m))}>
                Edit
              </button>
              {confirming === m.id ? (
                <ConfirmDelete name={m.name} onYes={() => void remove(m)} onNo={() => setConfirming(null)} />
              ) : (
                <button type="button" aria-label={`Delete ${m.name}`} onClick={() => setConfirming(m.id)}>
                  Delete
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}

function MacroForm(props: {
  title: string;
  draft: MacroDraft;
  choices: Choices;
  error: string | null;
  onChange(d: MacroDraft): void;
  onSubmit(e: Event): void;
  onCancel(): void;
}) {
  const { draft: d, onChange } = props;
  const nameRef = useRef<HTMLInputElement>(null);
  useEffect(() => nameRef.current?.focus(), []);
  return (
    <form class="settings-form rule-form" aria-labelledby="macro-form-title" onSubmit={props.onSubmit}>
      <h3 id="macro-form-title">{props.title}</h3>
      <FormError error={props.error} />
      <label>
        Macro name
        <input required maxLength={100} value={d.name} ref={nameRef} onInput={(e) => onChange({ ...d, name: e.currentTarget.value })} />
      </label>
      <label class="check">
        <input type="checkbox" checked={d.shared} onChange={(e) => onChange({ ...d, shared: e.currentTarget.checked })} /> Shared with every
        agent (else only its author sees it)
      </label>
      <h4>Actions</h4>
      <ActionsEditor actions={d.actions} choices={props.choices} onChange={(actions) => onChange({ ...d, actions })} />
      <div class="row-actions">
        <button type="submit" class="primary">
          Save macro
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
