/**
 * The client's one HTTP call. Its declared types name no DOM or Node type (`FetchLike` is
 * the little of `fetch` it uses), so a consumer compiles it with any `lib` and `types: []`.
 */

import { type AbortSignalLike, runtime } from './runtime.js';

/** What the client needs of `fetch`; the global `fetch` of Node 18+ and browsers fits. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array; signal?: AbortSignalLike },
) => Promise<{ status: number; ok: boolean; headers?: { get(name: string): string | null }; text(): Promise<string> }>;

/**
 * An answer that was not the expected one. `code` is the error envelope's code, or the
 * client's own: `timeout`, `network_error` (status 0: no answer), `malformed_response` (502).
 * `retryAfter` is the answer's `retry-after` in seconds, when it gave one.
 */
export class InboxClientError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'InboxClientError';
  }
}

export interface ClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` (a JWT or a personal-access token). */
  token?: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Sent as `X-Service-Admin-API-Key` (operator routes). */
  adminKey?: string;
  fetch?: FetchLike;
  /** Each attempt's limit, reading the answer included (default 30 000 ms); then `timeout`. */
  timeoutMs?: number;
  /** Aborts every call of this client, waits between retries included (rejects with its reason). */
  signal?: AbortSignalLike;
  /**
   * Further attempts after a refusal (default 2): a 429 or 503 always (the service acted on
   * nothing), and a 502, 504, timeout or lost connection when the request is safe to repeat
   * (GET, PUT, DELETE, or one carrying an `idempotency-key`).
   */
  retries?: number;
  /** The longest `retry-after` waited for (default 60 000 ms); a longer one raises at once. */
  maxRetryDelayMs?: number;
}

export interface Envelope<T> {
  data: T;
  meta: Record<string, unknown>;
}

export type Query = Record<string, string | number | undefined>;

export interface RequestInit {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: Query;
  body?: unknown;
  /** Bytes sent as they are (an upload's multipart body), instead of a JSON `body`. */
  rawBody?: { bytes: Uint8Array; contentType: string };
  headers?: Record<string, string | undefined>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RETRIES = 2;
const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
/** The first wait when an answer names none; doubled at each attempt. */
const BACKOFF_MS = 250;

/** `retry-after` in milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** One attempt's outcome: an answer, or why there was none. */
type Attempt =
  | { kind: 'answer'; status: number; ok: boolean; text: string; retryAfter: string | null }
  | { kind: 'failed'; error: InboxClientError };

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function wait(ms: number, signal: AbortSignalLike | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      runtime.clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = runtime.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One attempt under its own deadline. The caller's signal and the deadline both abort the
 * fetch; which one fired decides the outcome (the caller's abort is rethrown as it is).
 */
async function attempt(
  doFetch: FetchLike,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array },
  options: ClientOptions,
): Promise<Attempt> {
  const outer = options.signal;
  if (outer?.aborted) throw outer.reason;
  const controller = new runtime.AbortController();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timedOut = false;
  const timer = runtime.setTimeout(() => {
    timedOut = true;
    controller.abort(new InboxClientError('timeout', 0, `no answer within ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await doFetch(url, { ...init, signal: controller.signal });
    const text = await res.text();
    return { kind: 'answer', status: res.status, ok: res.ok, text, retryAfter: res.headers?.get('retry-after') ?? null };
  } catch (err) {
    if (outer?.aborted) throw outer.reason;
    if (timedOut)
      return { kind: 'failed', error: new InboxClientError('timeout', 0, `${init.method} ${url} had no answer within ${timeoutMs} ms`) };
    const reason = err instanceof Error ? err.message : String(err);
    return { kind: 'failed', error: new InboxClientError('network_error', 0, `${init.method} ${url} failed: ${reason}`) };
  } finally {
    runtime.clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

/**
 * One request; answers the parsed body (undefined for a 204). An error answer raises
 * InboxClientError with the envelope's code; a body that is not JSON raises
 * `malformed_response` (502). Refusals are retried as `ClientOptions.retries` says, waiting
 * what `retry-after` asks.
 */
export async function call<T>(options: ClientOptions, path: string, init: RequestInit = {}): Promise<T> {
  let url = options.baseUrl.replace(/\/+$/, '') + path;
  const search = Object.entries(init.query ?? {})
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  if (search) url += `?${search}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.adminKey) headers['x-service-admin-api-key'] = options.adminKey;
  for (const [k, v] of Object.entries(init.headers ?? {})) if (v !== undefined) headers[k] = v;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.rawBody) headers['content-type'] = init.rawBody.contentType;
  const doFetch = options.fetch ?? (runtime.fetch as FetchLike);
  const method = init.method ?? 'GET';
  const body = init.rawBody ? init.rawBody.bytes : init.body === undefined ? undefined : JSON.stringify(init.body);
  const repeatable = method === 'GET' || method === 'PUT' || method === 'DELETE' || headers['idempotency-key'] !== undefined;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;

  for (let n = 0; ; n++) {
    const result = await attempt(doFetch, url, { method, headers, ...(body === undefined ? {} : { body }) }, options);
    const backoff = BACKOFF_MS * 2 ** n;
    if (result.kind === 'failed') {
      if (n < retries && repeatable && backoff <= maxDelay) {
        await wait(backoff, options.signal);
        continue;
      }
      throw result.error;
    }
    if (result.ok) return parse<T>(path, result);
    const asked = retryAfterMs(result.retryAfter);
    const refused = result.status === 429 || result.status === 503;
    const gateway = result.status === 502 || result.status === 504;
    const delay = asked ?? backoff;
    if (n < retries && (refused || (gateway && repeatable)) && delay <= maxDelay) {
      await wait(delay, options.signal);
      continue;
    }
    const error = (parseOrNull(result.text) as { error?: { code?: string; message?: string } } | null)?.error;
    throw new InboxClientError(
      error?.code ?? 'http_error',
      result.status,
      error?.message ?? `HTTP ${result.status}`,
      asked === undefined ? undefined : Math.ceil(asked / 1000),
    );
  }
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function parse<T>(path: string, result: { status: number; text: string }): T {
  if (result.status === 204) return undefined as T;
  try {
    return JSON.parse(result.text) as T;
  } catch {
    throw new InboxClientError('malformed_response', 502, `${path} answered ${result.status} with a body that is not JSON`);
  }
}

/** The `data` of a `{ data, meta }` answer. */
export async function callData<T>(options: ClientOptions, path: string, init: RequestInit = {}): Promise<T> {
  return (await call<Envelope<T>>(options, path, init)).data;
}
