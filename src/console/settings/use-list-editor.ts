import { useState } from 'preact/hooks';
import { errorText } from '../shared/api';
import { attempt } from '../shared/use-load';

/** One kind of thing a settings list edits: what it is called, how a draft becomes a body, and the client's calls. */
export interface EditedKind<D, B extends { name: string }> {
  /** "Rule", "Macro": the start of the status line after a save or a delete. */
  noun: string;
  bodyOf(draft: D): B;
  create(body: B): Promise<unknown>;
  update(id: number, body: B): Promise<unknown>;
  remove(id: number): Promise<unknown>;
  /** Reads the list again, after every change. */
  reload(): Promise<void>;
  /** Where the list shows an error of a change made from a row. */
  setError(error: string | null): void;
}

/**
 * The state of a settings list with one form (Automation, Macros): the item being edited (null
 * id: a new one) and its draft, the form's error from the service (a 422 kept beside the form
 * with the draft as typed), the row asking to confirm a delete, and the status line that says
 * what was saved or deleted.
 */
export function useListEditor<D, B extends { name: string }>(kind: EditedKind<D, B>) {
  const [editing, setEditing] = useState<{ id: number | null; draft: D } | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  return {
    editing,
    formError,
    confirming,
    saved,
    setSaved,
    setConfirming,
    open(id: number | null, draft: D) {
      setFormError(null);
      setSaved(null);
      setEditing({ id, draft });
    },
    change(draft: D) {
      setEditing((e) => (e ? { ...e, draft } : e));
    },
    close() {
      setEditing(null);
    },
    async save(e: Event) {
      e.preventDefault();
      if (!editing) return;
      const body = kind.bodyOf(editing.draft);
      try {
        if (editing.id === null) await kind.create(body);
        else await kind.update(editing.id, body);
      } catch (err) {
        setFormError(errorText(err));
        return;
      }
      setEditing(null);
      setFormError(null);
      setSaved(`${kind.noun} ${body.name} saved.`);
      await kind.reload();
    },
    async remove(item: { id: number; name: string }) {
      setConfirming(null);
      if (await attempt(() => kind.remove(item.id), kind.setError)) setSaved(`${kind.noun} ${item.name} deleted.`);
      await kind.reload();
    },
  };
}
