import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { IntegrationConfig, IntegrationKey } from '../config.js';
import { hmacSha256Hex, safeEqual, sha256SignatureDigest } from '../crypto/hmac.js';
import { parseJson, type RawBody } from '../http/raw-body.js';
import type { AttachmentKind, EmailHeaders, NormalisedEvent } from '../messaging/events.js';
import type { ResolveHost } from '../net/address-guard.js';
import { wellFormed } from '../text/well-formed.js';

/**
 * How a delivery was accepted. Stored with the row (webhook_inbox.verification) and handed
 * to `normalise`, which may trust a delivery less for it: an SMS report accepted because it
 * named a message already sent (`correlated`) may update that message and nothing else.
 */
export const VERIFICATION_KINDS = ['signed', 'report_secret', 'correlated', 'skipped'] as const;
export type VerificationKind = (typeof VERIFICATION_KINDS)[number];

/**
 * WebhookVerification (docs/webhooks.md). `payload` only when verification already had to parse the
 * body, and then it is exactly what the adapter's `parse` gives for that body: a stored row's
 * payload is always derived again from its raw body, so nothing verification says about a
 * delivery may hide in its payload (that is what `via` is for).
 */
export type Verification =
  // `reason` only where a refusal can say why without telling anything about a secret.
  | { ok: false; reason?: string }
  | {
      ok: true;
      via: VerificationKind;
      payload?: unknown;
      /** The account the verification itself established (a Telegram secret names its bot); stored with the row. */
      account?: string;
    };

/** The answer of a signature (or shared-secret) check: accepted as `signed`, or refused. */
export function signed(ok: boolean, payload?: unknown): Verification {
  if (!ok) return { ok: false };
  return payload === undefined ? { ok: true, via: 'signed' } : { ok: true, via: 'signed', payload };
}

/** What `normalise` may know about a delivery besides its payload. */
export interface DeliveryFacts {
  verification: VerificationKind;
  /** The account verification established, when the payload cannot name it (Telegram's bot). */
  account?: string;
}

/**
 * Lookups a verifier may need; kept narrow so adapters stay free of SQL. A verifier that
 * needs a member the caller did not give refuses the delivery.
 */
export interface VerifyContext {
  /** Whether an outbound message with this provider id was sent through `integrationKey`. */
  isKnownOutboundMessage(integrationKey: string, externalMessageId: string): Promise<boolean>;
  /**
   * Records a provider's one-time token (Mailgun's) until `expiresAt`, in Postgres so every
   * process sees it: true the first time, false for a replay. A claim whose delivery is then
   * not stored is released, so the provider's retry of it is accepted.
   */
  claimOnce?(integrationKey: string, token: string, expiresAt: Date): Promise<boolean>;
  /** The account of the connection whose webhook secret this is (Telegram), by the secret's hash. */
  accountBySecret?(integrationKey: string, secret: string): Promise<string | undefined>;
  /** The current time (the deployment's clock); the system clock when absent. */
  now?(): Date;
  /** The request being verified, for providers that sign the URL they called (Twilio). */
  request?: VerifyRequest;
}

export interface VerifyRequest {
  /** The URL the provider was told to call: INBOX_PUBLIC_URL + the request's path and query. */
  publicUrl: string;
  /** The same path and query on the origin the request itself names (Host, X-Forwarded-Proto). */
  requestUrl: string;
  /** A warning for the operator about a refused delivery; never given a secret. */
  warn(message: string): void;
}

export type Query = Record<string, string | string[] | undefined>;

/** Where a reply goes: the connection's account and the contact's handle on this channel. */
export interface SendTarget {
  /** connection.external_account_id (phone-number id, page id, session, sender number, address) */
  accountId: string;
  /** The contact's handle (wa_id, PSID/IGSID, aggregator contact id, phone number, e-mail address). */
  to: string;
  text: string;
  /** WhatsApp Cloud: a template reply's `template` object, sent instead of `text` (the rendered body). */
  template?: unknown;
  /** The reply's own message id (live chat uses it as the provider id). */
  messageId: number;
  /**
   * E-mail threading: subject and Message-ID of the last inbound message, when known, and the
   * ids its References named (the reply's References are those and the Message-ID).
   */
  replyTo?: { subject?: string; messageId?: string; references?: string[] };
  /**
   * E-mail: the reply's own headers as decided when it was queued (Message-ID, Cc, Bcc,
   * subject, the mail answered); they win over `replyTo`. Absent on replies queued before.
   */
  email?: EmailHeaders;
  /**
   * The service wrote it on its own (an away message, a rule's reply, a survey): e-mail marks
   * it `Auto-Submitted` (RFC 3834) so the contact's own auto-responder does not answer it.
   */
  automatic?: boolean;
  /** The provider's timestamp of the contact's last inbound message (Meta's messaging_type). */
  lastInboundAt?: Date | null;
  /**
   * Files the reply carries (docs/attachments.md, "Outbound"); `text` is then their caption and
   * may be empty. Never more than the channel takes (attachment-limits.ts): the route refused more.
   */
  attachments?: OutboundAttachment[];
}

/** A stored attachment on its way out: a provider fetches it by `url` or is handed its bytes. */
export interface OutboundAttachment {
  id: number;
  kind: AttachmentKind;
  contentType: string;
  filename: string;
  size: number;
  /** A signed link to the bytes (INBOX_PUBLIC_URL, valid 15 minutes), for providers that fetch media. */
  url: string;
  /** The bytes, streamed from the attachment storage. */
  open(): Promise<Readable>;
}

/** Connection credentials merged over INBOX_INTEGRATIONS.<key> (apiBaseUrl, accessToken) by the caller. */
export interface SendCredentials {
  apiBaseUrl?: string;
  accessToken?: string;
  accountSid?: string;
  smtpUrl?: string;
  /** `email.imap`: the mailbox's IMAP server, and the login of both servers. */
  imapUrl?: string;
  username?: string;
  password?: string;
}

/**
 * What became of one send. `failed` is permanent and never retried; `retry` is a network
 * error, a timeout, 408, 429 or 5xx. Error texts are at most 1,000 characters and never carry
 * a credential.
 */
export type SendOutcome =
  | {
      outcome: 'sent';
      externalId: string;
      /**
       * The id the provider says it knows the recipient by, when its answer names one (WhatsApp
       * Cloud's `contacts[0].wa_id`, which may differ from the number written to: Brazil's
       * mobiles without the ninth digit); only when it differs. The contact's messages come from it.
       */
      recipientId?: string;
    }
  | { outcome: 'failed'; error: string }
  | { outcome: 'retry'; error: string; retryAfterSeconds?: number };

export interface SendOptions {
  /** The whole attempt's deadline, connecting and reading the answer included. */
  timeoutMs: number;
  /**
   * E-mail: whether a connection's `smtpUrl` may reach loopback and private addresses
   * (INBOX_ALLOW_PRIVATE_SMTP; default no), and how its host is resolved (the system resolver
   * by default; tests give their own to play a rebinding name).
   */
  smtp?: { allowPrivate: boolean; resolve?: ResolveHost };
  /**
   * INBOX_PUBLIC_URL, without a trailing slash, for a provider told per message where to post
   * its receipts (sms.twilio's `StatusCallback`). Absent, no such address is sent.
   */
  publicUrl?: string;
  /** The deployment's clock, for rules that depend on when a send happens (Meta's tags); the system clock when absent. */
  now?: () => Date;
}

/**
 * A channel adapter (docs/architecture.md, "Words"): everything the service knows of one
 * integration key, its webhook side (challenge, verify, normalise) and, where it has one, its sender.
 */
export interface ChannelAdapter {
  key: IntegrationKey;
  /** Subscription handshake: the value to echo as text/plain, or null (→ 404). */
  challenge(query: Query, headers: IncomingHttpHeaders, cfg: IntegrationConfig): string | null;
  /** Verification over the raw body (HMACs over its bytes) and the headers (docs/webhooks.md, "Integrations"). */
  verify(body: RawBody, headers: IncomingHttpHeaders, cfg: IntegrationConfig, ctx: VerifyContext): Verification | Promise<Verification>;
  /**
   * The body as this integration reads it; JSON when absent. Must be deterministic: a stored
   * row's payload is derived again from its raw body with it.
   */
  parse?(rawBody: string): unknown;
  /**
   * Bodies may carry binary parts (multipart attachments), so NUL bytes are no sign of a forged
   * delivery: they are stored as U+FFFD (Postgres text cannot hold NUL), like the other bytes
   * that are not UTF-8, and such a body also keeps its exact bytes (bytesToKeep) for the files
   * read from it later. Without it a body with NUL is refused.
   */
  binaryParts?: boolean;
  /** The payload's event name for WebhookInbox.event, when it has one. */
  eventName(payload: unknown): string | undefined;
  /** Provider payload → events. Throws NormaliseError when the payload cannot be read. */
  normalise(payload: unknown, delivery: DeliveryFacts): NormalisedEvent[];
  /**
   * The 200 answer of an accepted delivery when the provider expects its own (Twilio: an
   * empty TwiML document); `{"status":"queued"}` when absent.
   */
  acceptedAnswer?: { contentType: string; body: string };
  /** Sends a reply through the provider's API (docs/replies.md); absent when the channel cannot send. */
  send?(target: SendTarget, credentials: SendCredentials, options: SendOptions): Promise<SendOutcome>;
}

/** A payload the normaliser cannot read; its message becomes the row's lastError. */
export class NormaliseError extends Error {
  override name = 'NormaliseError';
}

/** The text a body is stored (and so parsed) as: NUL, which Postgres text cannot hold, as U+FFFD. */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/**
 * `value` (parsed JSON) with every string and key as it can be stored in a jsonb column: NUL,
 * which Postgres refuses in jsonb as in text, and a lone surrogate, which JSON escapes as
 * `\udXXX` and jsonb refuses too, as U+FFFD. For a provider's answer kept whole (a template's
 * components): one such character would otherwise fail the write of every row beside it.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(wellFormed(value));
  if (Array.isArray(value)) return value.map(storableJson);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(wellFormed(k)), storableJson(v)]));
  return value;
}

/**
 * The exact bytes to keep beside `stored` (the storableText of a binaryParts body), or null
 * when that text already is the body byte for byte. Decoding turns every byte sequence that
 * is not UTF-8 into U+FFFD and storableText turns NUL into it, so a text without U+FFFD holds
 * the bytes exactly; one with it may not (and keeps them, at the cost of a second copy).
 */
export function bytesToKeep(stored: string, body: RawBody): Buffer | null {
  return stored.includes('\uFFFD') ? body.bytes : null;
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
 * HMAC-SHA256(secret, the body's exact bytes). Hex is compared case-insensitively: an
 * uppercase digest of the right HMAC is the same digest. The compare is the project's one
 * constant-time helper.
 */
export function hmacMatches(
  signature: string | undefined,
  body: RawBody,
  secret: string | undefined,
  prefix: 'required' | 'optional',
): boolean {
  const digest = sha256SignatureDigest(signature, prefix);
  if (!secret || digest === undefined) return false;
  return safeEqual(digest.toLowerCase(), hmacSha256Hex(secret, body.bytes));
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

/**
 * The raw body as `adapter` reads it (docs/webhooks.md fallback parse). NUL characters, which
 * Postgres text and jsonb cannot hold, come out as U+FFFD so the delivery can still be stored.
 */
export function parseBody(adapter: ChannelAdapter, rawBody: string): unknown {
  const payload = adapter.parse ? adapter.parse(rawBody) : parseJson(rawBody);
  return rawBody.includes('\\u0000') || rawBody.includes('%00') ? withoutNul(payload) : payload;
}

function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\0', '\uFFFD');
  if (Array.isArray(value)) return value.map(withoutNul);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('\0', '\uFFFD'), withoutNul(v)]));
  }
  return value;
}

// ---- small readers for normalisers: they say what is missing instead of crashing ----

/**
 * `table[key]` for the table's own entries only. A provider's status is data: looked up
 * plainly, `constructor`, `__proto__` or `toString` would find Object.prototype's members
 * and pass for a status.
 */
export function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

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
