import { useEffect, useRef } from 'preact/hooks';

/** The button focused last, by its id: the one that opened a form, which the form's row replaces. */
let lastFocusedId: string | null = null;
if (typeof document !== 'undefined') {
  document.addEventListener('focusin', (e) => {
    const el = e.target;
    if (el instanceof HTMLButtonElement && el.id) lastFocusedId = el.id;
  });
}

/** Nothing has the focus: it was on something the last render removed. */
const focusLost = () => document.activeElement === null || document.activeElement === document.body;

/**
 * A settings form shown in place of a row or a button (an edit, a new item): it takes the
 * focus where it opens, Escape cancels it as its Cancel button does, and when it closes,
 * saved or cancelled, the focus goes back to the button that opened it. The row is drawn anew,
 * so the opener is found again by its id: give each opening button a stable id (`team-7-edit`).
 * Neither move happens when the focus is somewhere on purpose (a field the form focuses itself).
 */
export function useInlineForm(onCancel: () => void) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    const opener = lastFocusedId;
    if (focusLost()) form.current?.querySelector<HTMLElement>('input, textarea, select, button')?.focus();
    return () => {
      // After the render that removed the form, when the opener's row is back.
      setTimeout(() => {
        if (opener && focusLost()) document.getElementById(opener)?.focus();
      });
    };
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || e.defaultPrevented) return;
    e.preventDefault();
    onCancel();
  };
  return { ref: form, onKeyDown };
}
