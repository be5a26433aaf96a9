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
 * A POST answered with server-sent events (`accept: text/event-stream`), each event's name and
 * parsed data handed to `onEvent` as it arrives. The typed client reads whole answers only, so
 * this one reader streams, through the same fetch (and its 401 and two-factor hooks). A route
 * that answers JSON instead (an error before the stream began, or a server that did not
 * stream) is answered as the client would: its `data`, or an InboxClientError.
 */
export async function postEventStream(
  token: string | undefined,
  path: string,
  body: unknown,
  onEvent: (name: string, data: unknown) => void,
): Promise<unknown> {
  let res: Response;
  try {
    res = (await browserFetch(() => token)(location.origin + path, {
      method: 'POST',
      headers: { accept: 'text/event-stream, application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })) as unknown as Response;
  } catch (err) {
    throw new InboxClientError('network_error', 0, `POST ${path} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream') || !res.body) {
    const answer = (await res.json().catch(() => null)) as { data?: unknown; error?: { code?: string; message?: string } } | null;
    if (res.ok && answer && 'data' in answer) return answer.data;
    const retry = Number(res.headers.get('retry-after'));
    throw new InboxClientError(
      answer?.error?.code ?? 'http_error',
      res.status,
      answer?.error?.message ?? `HTTP ${res.status}`,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return undefined;
    buffered += value;
    for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const name = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) onEvent(name, JSON.parse(data));
    }
  }
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
