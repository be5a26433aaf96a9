import { useEffect, useRef, useState } from 'preact/hooks';
import type { Macro, Thread } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { byName } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { useDismiss } from '../shared/use-dismiss';
import { collect } from '../shared/use-load';

/**
 * The conversation header's "Macros" menu (docs/automation.md): the macros the agent sees,
 * read when the menu opens; one runs on the conversation in one transaction and the thread it
 * answers replaces the shown one (its reply and note arrive on the socket like any other).
 */
export function MacroMenu({ thread, onChange }: { thread: Thread; onChange(t: Thread): void }) {
  const s = useStore(session)!;
  const [open, setOpen] = useState(false);
  const [macros, setMacros] = useState<Macro[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<{ error: boolean; text: string } | null>(null);
  const toggle = useRef<HTMLButtonElement>(null);
  const first = useRef<HTMLButtonElement>(null);
  const wrap = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setOpen(false);
    setNote(null);
  }, [thread.id]);

  useEffect(() => {
    if (!open) return;
    let live = true;
    collect(s.client.macros({ limit: 100 }))
      .then((list) => live && setMacros(byName(list)))
      .catch((err: unknown) => live && setNote({ error: true, text: errorText(err) }));
    return () => {
      live = false;
    };
  }, [open]);

  // Escape closes it wherever the focus is, as a click outside does.
  useDismiss(open, () => setOpen(false), wrap, toggle);

  // The list takes the focus once it is there, so arrows are not needed to reach it.
  useEffect(() => {
    if (open && macros) first.current?.focus();
  }, [open, macros]);

  function close() {
    setOpen(false);
    toggle.current?.focus();
  }

  async function run(m: Macro) {
    setBusy(true);
    try {
      onChange(await s.client.runMacro(thread.id, m.id));
      setNote({ error: false, text: `Ran “${m.name}”.` });
      close();
    } catch (err) {
      setNote({ error: true, text: `“${m.name}” did not run: ${errorText(err)}` });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="macro-menu" ref={wrap}>
      <button type="button" ref={toggle} aria-expanded={open} aria-controls="macro-list" onClick={() => (open ? close() : setOpen(true))}>
        Macros
      </button>
      {open && (
        <div id="macro-list" class="macro-list">
          {macros === null ? (
            <p class="muted">Loading…</p>
          ) : macros.length === 0 ? (
            <p class="muted">No macros yet (Settings → Macros).</p>
          ) : (
            <ul aria-label="Run a macro">
              {macros.map((m, i) => (
                <li key={m.id}>
                  <button type="button" ref={i === 0 ? first : undefined} disabled={busy} onClick={() => void run(m)}>
                    {m.name}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <span class={note?.error ? 'error' : 'muted'} role="status">
        {note?.text ?? ''}
      </span>
    </div>
  );
}
