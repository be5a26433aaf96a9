import { InboxClientError } from './request.js';
import { runtime } from './runtime.js';

/**
 * Verifying the service's outbound webhooks (docs/outbound-webhooks.md "Verifying a delivery")
 * in either signature scheme, with WebCrypto so the same code runs in Node 20+, browsers and
 * edge runtimes. The signature covers the raw bytes: pass the body exactly as received, before
 * any JSON parsing (a re-serialised object does not verify).
 */

/** An outbound event's body. */
export interface WebhookEvent<T = unknown> {
  id: string;
  type: string;
  createdAt: string;
  workspaceId: number;
  data: T;
}

/** Request headers as Fetch (`Headers`) or Node (`IncomingHttpHeaders`) give them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookInput {
  /** The raw body as received: its bytes, or the exact string. */
  body: Uint8Array | string;
  headers: WebhookHeaders;
  /** The endpoint's secret (`whsec_…`); while a rotation's grace lasts, either secret may be given, or both. */
  secret: string | readonly string[];
  /** How far the delivery's timestamp may be from now, in seconds (default 300): older ones are replays. */
  toleranceSeconds?: number;
  /** Now, in milliseconds since the epoch (default `Date.now()`). */
  now?: number;
}

export interface VerifiedWebhook<T = unknown> {
  scheme: 'service' | 'standard';
  /** The delivery id, the same on every attempt and redelivery: the receiver's dedupe key. */
  deliveryId: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  event: WebhookEvent<T>;
}

const DEFAULT_TOLERANCE_SECONDS = 300;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.join(', ');
}

function concat(prefix: string, body: Uint8Array): Uint8Array {
  const head = new runtime.TextEncoder().encode(prefix);
  const out = new Uint8Array(head.byteLength + body.byteLength);
  out.set(head, 0);
  out.set(body, head.byteLength);
  return out;
}

function fromBase64(text: string): Uint8Array | undefined {
  try {
    const binary = runtime.atob(text);
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function fromHex(text: string): Uint8Array {
  return Uint8Array.from({ length: text.length / 2 }, (_, i) => Number.parseInt(text.slice(i * 2, i * 2 + 2), 16));
}

/** WebCrypto's verify compares in constant time. */
async function anyMatches(keys: Uint8Array[], signatures: Uint8Array[], data: Uint8Array): Promise<boolean> {
  for (const raw of keys) {
    const key = await runtime.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const signature of signatures) if (await runtime.crypto.subtle.verify('HMAC', key, signature, data)) return true;
  }
  return false;
}

const refuse = (why: string) => new InboxClientError('invalid_signature', 401, why);

/**
 * Checks a delivery's signature and timestamp and answers its event. Scheme `standard` is
 * recognised by its `webhook-signature` header, scheme `service` by `x-service-signature`
 * (and `x-service-signature-previous` during a rotation). A failure raises
 * `InboxClientError` `invalid_signature` (401, what the receiver should answer).
 */
export async function verifyWebhook<T = unknown>(input: VerifyWebhookInput): Promise<VerifiedWebhook<T>> {
  const body = typeof input.body === 'string' ? new runtime.TextEncoder().encode(input.body) : input.body;
  const secrets = typeof input.secret === 'string' ? [input.secret] : [...input.secret];
  if (secrets.length === 0 || secrets.some((s) => s === '')) throw refuse('no secret to verify with');
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = (input.now ?? Date.now()) / 1000;
  const fresh = (stamp: string | undefined): number => {
    if (!stamp || !/^\d{1,12}$/.test(stamp)) throw refuse('the timestamp header is missing or not unix seconds');
    const seconds = Number(stamp);
    if (Math.abs(now - seconds) > tolerance) throw refuse('the timestamp is outside the tolerance (a replay?)');
    return seconds;
  };

  let scheme: VerifiedWebhook['scheme'];
  let deliveryId: string | undefined;
  let timestamp: number;
  let signed: boolean;
  const standard = header(input.headers, 'webhook-signature');
  if (standard !== undefined) {
    scheme = 'standard';
    deliveryId = header(input.headers, 'webhook-id');
    if (!deliveryId) throw refuse('webhook-id is missing');
    timestamp = fresh(header(input.headers, 'webhook-timestamp'));
    // Standard Webhooks keys the HMAC with the base64 bytes after the `whsec_` prefix.
    const keys = secrets.map((s) => fromBase64(s.startsWith('whsec_') ? s.slice(6) : s));
    if (keys.some((k) => k === undefined)) throw refuse('a secret is not `whsec_` and base64');
    const signatures = standard
      .split(' ')
      .filter((part) => part.startsWith('v1,'))
      .map((part) => fromBase64(part.slice(3)))
      .filter((s): s is Uint8Array => s !== undefined && s.byteLength === 32);
    signed = await anyMatches(keys as Uint8Array[], signatures, concat(`${deliveryId}.${timestamp}.`, body));
  } else {
    const current = header(input.headers, 'x-service-signature');
    if (current === undefined) throw refuse('neither x-service-signature nor webhook-signature is present');
    scheme = 'service';
    deliveryId = header(input.headers, 'x-service-delivery') ?? '';
    const stamp = header(input.headers, 'x-service-timestamp');
    timestamp = fresh(stamp);
    // The service scheme keys its HMAC with the secret string itself, `whsec_` included.
    const keys = secrets.map((s) => new runtime.TextEncoder().encode(s));
    const signatures = [current, header(input.headers, 'x-service-signature-previous')]
      .map((value) => /^sha256=([0-9a-f]{64})$/.exec(value ?? '')?.[1])
      .filter((hex): hex is string => hex !== undefined)
      .map(fromHex);
    signed = await anyMatches(keys, signatures, concat(`${stamp}.`, body));
  }
  if (!signed) throw refuse('no signature matches the secret');

  let event: WebhookEvent<T>;
  try {
    event = JSON.parse(new runtime.TextDecoder().decode(body)) as WebhookEvent<T>;
  } catch {
    throw new InboxClientError('malformed_response', 400, 'the signed body is not JSON');
  }
  return { scheme, deliveryId, timestamp, event };
}
