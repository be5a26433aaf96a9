import { useEffect, useRef } from 'preact/hooks';
import type { Macro, MacroCreate } from '../../../packages/client/src/index';
import { byName } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { collect, useLoad } from '../shared/use-load';
import { type ActionDraft, actionDraft, actionOf, blankAction } from './automation-model';
import { Failure, FormError } from './Failure';
import { InlineForm } from './InlineForm';
import { ActionsEditor, type Choices, describeAction, EditAndDelete, useChoices } from './RuleParts';
import { useListEditor } from './use-list-editor';

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
  const macros = useLoad(() => collect(s.client.macros({ limit: 100 })).then(byName));
  const choices = useChoices();
  const editor = useListEditor<MacroDraft, MacroCreate>({
    noun: 'Macro',
    bodyOf,
    create: (body) => s.client.createMacro(body),
    update: (id, body) => s.client.updateMacro(id, body),
    remove: (id) => s.client.deleteMacro(id),
    reload: macros.reload,
    setError: macros.setError,
  });
  const { editing } = editor;
  const nameOf = (id: number | null) => choices.data?.users.find((u) => u.id === id)?.name ?? 'someone';

  return (
    <>
      <Failure error={macros.error ?? choices.error} />
      {editor.saved && (
        <p role="status" class="muted">
          {editor.saved}
        </p>
      )}
      <p class="muted">Agents run a macro from a conversation's header: its actions in order, as the agent who runs it.</p>
      {editing && choices.data ? (
        <MacroForm
          title={editing.id === null ? 'New macro' : `Edit ${editing.draft.name || 'macro'}`}
          draft={editing.draft}
          choices={choices.data}
          error={editor.formError}
          onChange={editor.change}
          onSubmit={(e) => void editor.save(e)}
          onCancel={editor.close}
        />
      ) : (
        <p>
          <button type="button" id="macro-new" class="primary" disabled={!choices.data} onClick={() => editor.open(null, blankMacro())}>
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
              <EditAndDelete
                id={`macro-${m.id}`}
                name={m.name}
                canEdit={Boolean(choices.data)}
                confirming={editor.confirming === m.id}
                onEdit={() => editor.open(m.id, draftOf(m))}
                onAsk={() => editor.setConfirming(m.id)}
                onDelete={() => void editor.remove(m)}
                onKeep={() => editor.setConfirming(null)}
              />
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
    <InlineForm
      class="settings-form rule-form"
      labelledBy="macro-form-title"
      save="Save macro"
      onSubmit={props.onSubmit}
      onCancel={props.onCancel}
    >
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
    </InlineForm>
  );
}
