import { useEffect, useRef } from 'preact/hooks';

export const SHORTCUTS: [key: string, what: string][] = [
  ['j', 'Next conversation'],
  ['k', 'Previous conversation'],
  ['r', 'Reply (focus the reply box)'],
  ['e', 'Resolve the conversation'],
  ['Enter', 'Send (Shift+Enter: new line)'],
  ['/', 'Canned responses (in the reply box)'],
  ['@', 'Mention a colleague (in a private note)'],
  ['Ctrl+J', 'Suggest a reply (in the reply box, when AI assist is on)'],
  ['Esc', 'Leave the reply box, close this list'],
  ['?', 'Show these shortcuts'],
];

/** The `?` dialog: a native <dialog>, so focus is trapped and Escape closes it. */
export function Shortcuts({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title" onClose={onClose}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={() => dialog.current?.close()}>
        Close
      </button>
    </dialog>
  );
}
