import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';

/**
 * A pop-up menu's way out: while `open`, a click outside `wrap` closes it, and Escape closes
 * it wherever the focus is and gives the focus back to `toggle`, the button that opened it.
 */
export function useDismiss(open: boolean, close: () => void, wrap: RefObject<HTMLElement>, toggle: RefObject<HTMLElement>): void {
  useEffect(() => {
    if (!open) return;
    const outside = (e: MouseEvent) => {
      if (!wrap.current?.contains(e.target as Node)) close();
    };
    const onEscape = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      close();
      toggle.current?.focus();
    };
    document.addEventListener('mousedown', outside);
    document.addEventListener('keydown', onEscape);
    return () => {
      document.removeEventListener('mousedown', outside);
      document.removeEventListener('keydown', onEscape);
    };
  }, [open]);
}
