import { type FetchLike, InboxClientError, type TenantClient, tenantClient } from '../../../packages/client/src/index';

/**
 * The console's one way to the service: the typed client (`packages/client`) over the
 * browser's fetch. The wrapper adds what the client does not do: a 401 on a signed-in call,
 * which may mean the session has ended, and a 403 asking for two-factor sign-in.
 */
export interface ApiHooks {
  /** A signed-in request answered 401 (the session may have been revoked). */
  onUnauthorized(tokenUsed: string): void;
  /** A signed-in request answered 403 `2fa_required`: the workspace asks for two-factor sign-in first. */
  onTwoFactorRequired(): void;
}

let hooks: ApiHooks = { onUnauthorized: () => undefined, onTwoFactorRequired: () => undefined };
export const setApiHooks = (next: ApiHooks) => {
  hooks = next;
};

/** Seconds from a 429's `retry-after` header. */
export const retryAfterOf = (err: unknown): number | null =>
  err instanceof InboxClientError && err.status === 429 ? (err.retryAfter ?? null) : null;

/** The browser's fetch; `token` (read at each call) is sent when the client itself names none. */
const browserFetch =
  (token?: () => string | undefined): FetchLike =>
  async (url, init) => {
    const current = token?.();
    const headers = current && !init.headers.authorization ? { ...init.headers, authorization: `Bearer ${current}` } : init.headers;
    // An upload's bytes are a Uint8Array, which the DOM typings of BodyInit do not name.
    const res = await fetch(url, { ...init, headers } as RequestInit);
    const auth = headers.authorization;
    if (res.status === 401 && auth?.startsWith('Bearer ')) hooks.onUnauthorized(auth.slice(7));
    if (res.status === 403 && auth?.startsWith('Bearer ')) {
      // The body is read from a copy: the caller still reads the answer itself.
      const body = (await res
        .clone()
        .json()
        .catch(() => null)) as { error?: { code?: string } } | null;
      if (body?.error?.code === '2fa_required') hooks.onTwoFactorRequired();
    }
    return res;
  };

/**
 * A client of the service on this origin. With `token`, every call sends the token it reads
 * at that moment: one client serves a whole sign-in, however often its token is replaced, so
 * no component holding it ever sends a token that has ended. Without, calls are anonymous
 * (login, and the refresh cookie's way).
 */
export function makeClient(token?: () => string | undefined): TenantClient {
  // No retries: a person sees the refusal (and its retry-after) and decides.
  return tenantClient({ baseUrl: location.origin, fetch: browserFetch(token), retries: 0 });
}

/**
 * The call got no answer (the network dropped, or it timed out): the request may or may not
 * have reached the service. The client says so with `network_error` or `timeout` (status 0).
 */
export function unanswered(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  return err instanceof InboxClientError && err.status === 0 && (err.code === 'network_error' || err.code === 'timeout');
}

/** A message a person can act on, from whatever a call threw. */
export function errorText(err: unknown): string {
  if (unanswered(err)) return 'The service could not be reached. Check the connection and try again.';
  if (err instanceof InboxClientError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

export { InboxClientError };
