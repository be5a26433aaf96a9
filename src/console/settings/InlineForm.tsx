import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A settings form shown in place of a row or a button (an edit, a new rule): its fields, then
 * Save and Cancel. It takes the focus where it opens, Escape cancels it, and the focus goes
 * back to the button that opened it when it closes (useInlineForm, below).
 */
export function InlineForm(props: {
  /** The form's accessible name, or the id of the heading inside it that gives it. */
  label?: string;
  labelledBy?: string;
  class?: string;
  /** The submit button's text: "Save" unless given. */
  save?: string;
  onSubmit(e: Event): void;
  onCancel(): void;
  children: ComponentChildren;
}) {
  const inline = useInlineForm(props.onCancel);
  return (
    <form
      class={props.class ?? 'settings-form'}
      aria-label={props.label}
      aria-labelledby={props.labelledBy}
      onSubmit={props.onSubmit}
      ref={inline.ref}
      onKeyDown={inline.onKeyDown}
    >
      {props.children}
      <div class="row-actions">
        <button type="submit" class="primary">
          {props.save ?? 'Save'}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

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
function useInlineForm(onCancel: () => void) {
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
