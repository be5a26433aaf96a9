import { useEffect, useRef } from 'preact/hooks';

/** An error shown at the top of a settings page (announced to screen readers). */
export function Failure({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/** The service's refusal beside the form; it takes the focus so a keyboard user hears and reaches it. */
export function FormError({ error }: { error: string | null }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (error) ref.current?.focus();
  }, [error]);
  if (!error) return null;
  return (
    <p class="error" role="alert" tabIndex={-1} ref={ref}>
      {error}
    </p>
  );
}
