/** An error shown at the top of a settings page (announced to screen readers). */
export function Failure({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}
