import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * Calls `onVisible` once when the element scrolls into view, armed again whenever `deps` change
 * (a new cursor): how the list and the transcript read their next page without a scroll handler.
 */
export function useOnVisible(ref: RefObject<Element>, onVisible: () => void, deps: unknown[]) {
  // The newest closure, so it reads the cursor and filter of the render that armed it.
  const latest = useRef(onVisible);
  latest.current = onVisible;
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      latest.current();
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, deps);
}
