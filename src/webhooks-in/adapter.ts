import type { IncomingHttpHeaders } from 'node:http';
import type { IntegrationConfig, IntegrationKey } from '../config.js';
import { hmacSha256Hex, safeEqual } from '../crypto/hmac.js';

/** SPEC §2 WebhookVerification: `payload` only when verification already had to parse. */
export interface Verification {
  ok: boolean;
  payload?: unknown;
}

export type MessageStatusEvent = 'sent' | 'delivered' | 'read' | 'failed';

/** What a provider delivery means, independent of the provider. */
export type NormalisedEvent =
  | {
      type: 'message';
      /** The provider's id of the receiving account (phone-number id, page id, …). */
      externalAccountId: string;
      externalMessageId: string;
      contact: { externalId: string; name?: string };
      text: string;
      occurredAt?: Date;
    }
  | {
      type: 'status';
      /** '' for an unsigned SMS report: it may only update a message whose id is known. */
      externalAccountId: string;
      externalMessageId: string;
      status: MessageStatusEvent;
      error?: string;
      occurredAt?: Date;
    };

/** Lookups a verifier may need; kept narrow so adapters stay free of SQL. */
export interface VerifyContext {
  /** Whether an outbound message with this provider id was sent through `integrationKey`. */
  isKnownOutboundMessage(integrationKey: string, externalMessageId: string): Promise<boolean>;
}

export type Query = Record<string, string | string[] | undefined>;

export interface WebhookAdapter {
  key: IntegrationKey;
  /** Subscription handshake: the value to echo as text/plain, or null (→ 404). */
  challenge(query: Query, headers: IncomingHttpHeaders, cfg: IntegrationConfig): string | null;
  /** Verification over the raw body string and the headers (SPEC §5.2). */
  verify(rawBody: string, headers: IncomingHttpHeaders, cfg: IntegrationConfig, ctx: VerifyContext): Verification | Promise<Verification>;
  /** The payload's event name for WebhookInbox.event, when it has one. */
  eventName(payload: unknown): string | undefined;
  /** Provider payload → events. Throws NormaliseError when the payload cannot be read. */
  normalise(payload: unknown): NormalisedEvent[];
}

/** A payload the normaliser cannot read; its message becomes the row's lastError. */
export class NormaliseError extends Error {
  override name = 'NormaliseError';
}

/** A header's single value (the first, when repeated); undefined when absent or empty. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** The first header present among `names`, in order (first present wins). */
export function firstHeader(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const v = header(headers, name);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * Checks `sha256=<hex>` (or bare `<hex>` when the prefix is optional) against
 * HMAC-SHA256(secret, rawBody). The compare is the project's one constant-time helper.
 */
export function hmacMatches(
  signature: string | undefined,
  rawBody: string,
  secret: string | undefined,
  prefix: 'required' | 'optional',
): boolean {
  if (!secret || signature === undefined) return false;
  let digest = signature;
  if (digest.startsWith('sha256=')) digest = digest.slice('sha256='.length);
  else if (prefix === 'required') return false;
  return safeEqual(digest, hmacSha256Hex(secret, rawBody));
}

/** The `hub.*` subscription protocol (Meta): echo hub.challenge when mode and token match. */
export function hubChallenge(query: Query, expectedToken: string | undefined): string | null {
  const one = (k: string) => {
    const v = query[k];
    return typeof v === 'string' ? v : undefined;
  };
  const mode = one('hub.mode');
  const token = one('hub.verify_token');
  const challenge = one('hub.challenge');
  if (mode === undefined || token === undefined || challenge === undefined) return null;
  if (mode !== 'subscribe' || !expectedToken || !safeEqual(token, expectedToken)) return null;
  return challenge;
}

/** Parsed payloads → the exact text they were parsed from. */
const parsedFrom = new WeakMap<object, string>();

/** JSON.parse that returns undefined for invalid JSON and remembers an object's source text. */
export function parseJson(rawBody: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(rawBody);
  } catch {
    return undefined;
  }
  if (typeof value === 'object' && value !== null) parsedFrom.set(value, rawBody);
  return value;
}

/**
 * The payload as JSON text for storage. A payload parsed straight from the raw body is stored
 * from that text (Postgres parses it into jsonb either way), which spares serialising it again
 * on the ingestion hot path.
 */
export function payloadText(payload: unknown): string | null {
  if (payload === undefined || payload === null) return null;
  return (typeof payload === 'object' ? parsedFrom.get(payload) : undefined) ?? JSON.stringify(payload);
}

// ---- small readers for normalisers: they say what is missing instead of crashing ----

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function requireObject(v: unknown, what: string): Record<string, unknown> {
  if (!isObject(v)) throw new NormaliseError(`${what} is not an object`);
  return v;
}

export function requireString(v: unknown, what: string): string {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string' || v === '') throw new NormaliseError(`${what} is missing`);
  return v;
}

export function optionalString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

export function arrayOf(v: unknown, what: string): unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new NormaliseError(`${what} is not an array`);
  return v;
}

/** Unix seconds (number or numeric string), milliseconds, or an ISO string → Date. */
export function toDate(v: unknown): Date | undefined {
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) {
    const n = Number(v);
    const d = new Date(n < 1e12 ? n * 1000 : n);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  if (typeof v === 'string') {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}
