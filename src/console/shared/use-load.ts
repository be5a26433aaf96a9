import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api';

/** Collects an async iterator (the client's cursor lists walk every page). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A screen's data: loaded on mount, when `deps` change and on `reload()`, with the error a person can read. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | null>(null);
  // A read's own failure, which the next read that works clears; and a change's refusal
  // (`setError`, as `attempt` reports it), which a read does not: a page reads its list again
  // after every change, refused or not, and the refusal must stay until the next change.
  const [loadError, setLoadError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The newest closure: after a token refresh it holds the session's new client.
  const latest = useRef(load);
  latest.current = load;
  const reload = useCallback(
    () =>
      latest
        .current()
        .then((value) => {
          setData(value);
          setLoadError(null);
        })
        .catch((err: unknown) => setLoadError(errorText(err))),
    deps,
  );
  // Another subject (new `deps`): a refusal about the last one no longer applies.
  useEffect(() => {
    setError(null);
    void reload();
  }, [reload]);
  return { data, error: error ?? loadError, reload, setError };
}

/** Runs a change, reporting its error; answers whether it succeeded. */
export async function attempt(run: () => Promise<unknown>, setError: (e: string | null) => void): Promise<boolean> {
  try {
    await run();
    setError(null);
    return true;
  } catch (err) {
    setError(errorText(err));
    return false;
  }
}
