import { isObject, type SendOutcome, storableText } from './channel.js';
import { outcomes } from './send-outcome.js';

/** Meta's Graph API (WhatsApp Cloud API, Messenger, Instagram messaging), pinned to a version. */
export const META_GRAPH_API = 'https://graph.facebook.com/v23.0';

/** `path` under a base URL that may or may not end with a slash. */
export function apiUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + path;
}

/** A provider's answer is read up to this size: an id or an error message never needs more. */
const ANSWER_MAX_BYTES = 256 * 1024;

export interface ProviderRequest {
  /** The integration key, named in error texts. */
  key: string;
  url: string;
  /** Authentication and any provider headers; content-type and accept are set here. */
  headers: Record<string, string>;
  /** JSON, a form, or multipart form data (a file upload: fetch writes its boundary). */
  body: { json: unknown } | { form: Record<string, string> } | { multipart: FormData };
  timeoutMs: number;
  /** Values that must never appear in an outcome's error text. */
  secrets: readonly (string | undefined)[];
  /** Where the id is in a success body, for the error when it is not there: "messages[0].id". */
  idField: string;
  /** The provider's message id from a 2xx body, or undefined when it has none. */
  readId(body: unknown): string | undefined;
  /** The provider's id of the recipient from a 2xx body, when it names one (SendOutcome's `recipientId`). */
  readRecipient?(body: unknown): string | undefined;
  /** A 4xx body that says "too many, try later" (Meta's rate limits come as 400s): retried as a 429 is. */
  throttled?(body: unknown): boolean;
}

/**
 * Meta's rate-limit error codes (Graph API and WhatsApp Cloud API error references), answered
 * with HTTP 400 rather than 429: 4, 17, 32 and 613 (app, user, page and call-count limits),
 * 80001, 80002, 80006 and 80007 (Pages, Instagram, Messenger and WhatsApp business-use-case
 * limits), 130429 (Cloud API throughput) and 131056 (too many messages to one person in a short
 * time). Each says to wait and try again; a failed reply would need an agent to resend it.
 */
const META_RATE_LIMIT_CODES = new Set([4, 17, 32, 613, 80001, 80002, 80006, 80007, 130429, 131056]);

export function metaThrottled(body: unknown): boolean {
  return isObject(body) && isObject(body.error) && typeof body.error.code === 'number' && META_RATE_LIMIT_CODES.has(body.error.code);
}

/**
 * POSTs one message to a provider and classifies the answer (docs/replies.md): 2xx with an
 * id → sent; 408, 429, 5xx, a network error or the deadline → retry (429/503 with their
 * `retry-after`, else Telegram's `parameters.retry_after`); any other answer → failed with the
 * provider's own error message, or `HTTP <status>` when the body has none. Redirects are not followed: a provider API never
 * redirects a send, and following one would hand the token to wherever it points.
 */
export async function postToProvider(req: ProviderRequest): Promise<SendOutcome> {
  const { failed, retry } = outcomes(req.secrets);
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return failed(`${req.key}: apiBaseUrl does not make a valid URL (${req.url})`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return failed(`${req.key}: apiBaseUrl must be an http(s) URL`);

  const [contentType, payload]: [string | undefined, string | FormData] =
    'json' in req.body
      ? ['application/json', JSON.stringify(req.body.json)]
      : 'form' in req.body
        ? ['application/x-www-form-urlencoded', new URLSearchParams(req.body.form).toString()]
        : [undefined, req.body.multipart];
  let status: number;
  let headers: Headers;
  let text: string;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...req.headers, accept: 'application/json', ...(contentType ? { 'content-type': contentType } : {}) },
      body: payload,
      redirect: 'manual',
      // One deadline for the whole attempt: connecting, waiting and reading the answer.
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    status = res.status;
    headers = res.headers;
    text = await readCapped(res);
  } catch (err) {
    return retry(`${req.key}: ${describeFetchError(err, req.timeoutMs)}`);
  }

  const body = parseJsonOrUndefined(text);
  if (status >= 200 && status < 300) {
    const id = req.readId(body);
    // Never a made-up id: receipts reconcile on it, and a send without one cannot be traced. A
    // NUL in it, which Postgres cannot store, is U+FFFD as in the receipts that name it.
    const recipient = req.readRecipient?.(body);
    return id
      ? { outcome: 'sent', externalId: storableText(id), ...(recipient ? { recipientId: storableText(recipient) } : {}) }
      : failed(`${req.key} answered HTTP ${status} without a message id (${req.idField})`);
  }
  const message = providerMessage(body);
  if (status === 408 || status === 429 || status >= 500 || (status >= 400 && req.throttled?.(body) === true)) {
    return retry(
      message ? `HTTP ${status}: ${message}` : `HTTP ${status}`,
      retryAfterSeconds(headers.get('retry-after')) ?? bodyRetryAfter(body),
    );
  }
  if (status >= 300 && status < 400) return failed(`${req.key} answered HTTP ${status}, a redirect (not followed): check apiBaseUrl`);
  return failed(message ?? `HTTP ${status}`);
}

/** `retry-after` as seconds to wait: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The wait a provider names in its error body rather than a header: Telegram's flood control
 * answers 429 with `parameters.retry_after` (seconds) and no `retry-after` header.
 */
function bodyRetryAfter(body: unknown): number | undefined {
  const wait = isObject(body) && isObject(body.parameters) ? body.parameters.retry_after : undefined;
  return typeof wait === 'number' && Number.isSafeInteger(wait) && wait >= 0 ? wait : undefined;
}

/**
 * The error message in a provider's error body: Meta `{error:{message}}`, Twilio
 * `{code, message}`, WAHA/NestJS `{message: string | string[]}`, the aggregator
 * `{error:{code, message}}`, a bare `{error: "…"}`, or Telegram's `{ok: false, description}`.
 */
export function providerMessage(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const error = body.error;
  if (isObject(error)) return text(error.message) ?? text(error.error_user_msg);
  return text(body.message) ?? text(error) ?? text(body.detail) ?? text(body.description);
}

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (Array.isArray(v)) {
    const parts = v.filter((p): p is string => typeof p === 'string' && p.trim() !== '');
    return parts.length > 0 ? parts.join('; ') : undefined;
  }
  return undefined;
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > ANSWER_MAX_BYTES) {
      await reader.cancel();
      break;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
  return `network error: ${cause?.message ?? (err instanceof Error ? err.message : String(err))}`;
}
