/**
 * The client's one HTTP call. Its declared types name no DOM or Node type (`FetchLike` is
 * the little of `fetch` it uses), so a consumer compiles it with any `lib` and `types: []`.
 */

/** What the client needs of `fetch`; the global `fetch` of Node 18+ and browsers fits. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array },
) => Promise<{ status: number; ok: boolean; text(): Promise<string> }>;

export class InboxClientError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
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

/**
 * One request; answers the parsed body (undefined for a 204). An error answer raises
 * InboxClientError with the envelope's code; a body that is not JSON raises
 * `malformed_response` (502).
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
  const doFetch = options.fetch ?? (globalThis.fetch as unknown as FetchLike);
  const res = await doFetch(url, {
    method: init.method ?? 'GET',
    headers,
    body: init.rawBody ? init.rawBody.bytes : init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (res.status === 204 && res.ok) return undefined as T;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InboxClientError('malformed_response', 502, `${path} answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
    throw new InboxClientError(error?.code ?? 'http_error', res.status, error?.message ?? `HTTP ${res.status}`);
  }
  return body as T;
}

/** The `data` of a `{ data, meta }` answer. */
export async function callData<T>(options: ClientOptions, path: string, init: RequestInit = {}): Promise<T> {
  return (await call<Envelope<T>>(options, path, init)).data;
}
