/**
 * A control disabled while its change is on its way loses the focus to the page's body: call
 * this before the change and the answer it returns once the change is done (or refused), and
 * the control that had the focus gets it back, unless it is gone or the focus moved on.
 */
export function holdFocus(): () => void {
  const had = document.activeElement;
  return () =>
    requestAnimationFrame(() => {
      if (had instanceof HTMLElement && had.isConnected && document.activeElement === document.body) had.focus();
    });
}
