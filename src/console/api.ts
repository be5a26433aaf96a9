import { type FetchLike, InboxClientError, type TenantClient, tenantClient } from '../client/client';

/**
 * The console's one way to the service: the package's own typed client (`inbox/client`) over
 * the browser's fetch. The wrapper keeps what the client does not surface: a 429's
 * `retry-after`, and a 401 on a signed-in call, which may mean the session has ended.
 */
export interface ApiHooks {
  /** A signed-in request answered 401 (the session may have been revoked). */
  onUnauthorized(tokenUsed: string): void;
}

let hooks: ApiHooks = { onUnauthorized: () => undefined };
export const setApiHooks = (next: ApiHooks) => {
  hooks = next;
};

/** Seconds from the last 429's `retry-after` header (the client's error carries no headers). */
let lastRetryAfter: number | null = null;
export const retryAfterOf = (err: unknown): number | null =>
  err instanceof InboxClientError && err.status === 429 ? lastRetryAfter : null;

const browserFetch: FetchLike = async (url, init) => {
  // An upload's bytes are a Uint8Array, which the DOM typings of BodyInit do not name.
  const res = await fetch(url, init as RequestInit);
  if (res.status === 429) {
    const seconds = Number(res.headers.get('retry-after'));
    lastRetryAfter = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : null;
  }
  const auth = init.headers.authorization;
  if (res.status === 401 && auth?.startsWith('Bearer ')) hooks.onUnauthorized(auth.slice(7));
  return res;
};

export function makeClient(token?: string): TenantClient {
  return tenantClient({ baseUrl: location.origin, fetch: browserFetch, ...(token ? { token } : {}) });
}

/** A message a person can act on, from whatever a call threw. */
export function errorText(err: unknown): string {
  if (err instanceof InboxClientError) return err.message;
  if (err instanceof TypeError) return 'The service could not be reached. Check the connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

export { InboxClientError };
