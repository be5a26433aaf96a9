import type { FastifyRequest } from 'fastify';
import { type ChannelAdapter, firstHeader, type Verification, type VerifyContext, type VerifyRequest } from '../channels/channel.js';
import type { IntegrationConfig } from '../config.js';
import { findAccountBySecretHash } from '../connections/telegram-webhook.queries.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import type { RawBody } from '../http/raw-body.js';
import { findOutboundByExternalId } from '../messaging/messaging.queries.js';
import { claimWebhookToken, releaseWebhookTokens } from './webhook-tokens.queries.js';

/** Headers INBOX_LOG_WEBHOOKS reads the signing header from, in order (docs/webhooks.md). */
const LOGGED_SIGNATURE_HEADERS = [
  'x-hub-signature-256',
  'x-service-signature',
  'x-gatewayone-signature',
  'x-webhook-signature',
  'x-signature',
  'x-twilio-signature',
  'x-webhook-hmac',
];
/**
 * Integrations whose "signature" header is the shared secret itself (the e-mail adapter's
 * `x-vendor-auth`/`x-service-signature`, in the order it reads them): logging it would hand
 * out the credential, so only its first 4 characters are logged, enough to tell which secret a
 * sender used.
 */
const BEARER_SECRET_HEADERS: Record<string, readonly string[]> = { email: ['x-vendor-auth', 'x-service-signature'] };

function loggedSignature(key: string, headers: FastifyRequest['headers']): string | null {
  const bearer = Object.hasOwn(BEARER_SECRET_HEADERS, key) ? BEARER_SECRET_HEADERS[key] : undefined;
  const value = firstHeader(headers, bearer ?? LOGGED_SIGNATURE_HEADERS);
  if (value === undefined) return null;
  return bearer ? `${value.slice(0, 4)}…` : value;
}

/** INBOX_LOG_WEBHOOKS: one line per delivery, before verification, with its signature as the policy above allows. */
export function logDelivery(request: FastifyRequest, key: string, rawBody: string): void {
  request.log.info({ integrationKey: key, signature: loggedSignature(key, request.headers), rawBody }, 'inbound webhook');
}

/** Integrations that can never be accepted, whatever the flags say (docs/webhooks.md, "Integrations"). */
const NEVER_ACCEPTED = new Set(['livechat', 'ai']);

/** A one-time token a delivery claimed while it was verified (Mailgun's). */
export interface TokenClaim {
  integrationKey: string;
  token: string;
}

/**
 * How ingestion verifies a delivery: the adapter's check over the raw bytes, with the context
 * a verifier may read, and the rules every integration shares (never-accepted keys, NUL, the
 * skip flags). Built once per app.
 */
export function deliveryVerifier(deps: Deps) {
  const lookups: Lookups = {
    isKnownOutboundMessage: async (integrationKey, id) => (await findOutboundByExternalId(deps.db, integrationKey, [id])).length > 0,
    accountBySecret: (integrationKey, secret) => findAccountBySecretHash(deps.db, integrationKey, sha256Hex(secret)),
  };
  return {
    /**
     * Verifies a delivery; the tokens it claims on the way are pushed onto `claims`. `settings`
     * replace INBOX_INTEGRATIONS.<key> for a connection's own URL (verificationSettings).
     */
    verify: (adapter: ChannelAdapter, body: RawBody, request: FastifyRequest, claims: TokenClaim[], settings?: IntegrationConfig) =>
      verify(deps, adapter, body, request, new RequestContext(deps, lookups, request, adapter.key, claims), settings),
    /** Gives a delivery's claims back when it was not stored: the provider sends it again with the same token. */
    async release(request: FastifyRequest, claims: TokenClaim[]): Promise<void> {
      if (claims.length > 0)
        await releaseWebhookTokens(deps.db, claims).catch((e: unknown) => request.log.warn({ err: e }, 'token release failed'));
    },
  };
}

/** What verifiers look up in the database, made once per app. */
interface Lookups {
  isKnownOutboundMessage(integrationKey: string, externalMessageId: string): Promise<boolean>;
  accountBySecret(integrationKey: string, secret: string): Promise<string | undefined>;
}

/**
 * A request's verify context. A class, so a delivery costs one small object and no closures
 * (the providers' hot path reads none of it): the one-time tokens it claims go onto `claims`,
 * to give back if it is not stored, and `request` is built only when a verifier reads it
 * (Twilio's signed URL), so the other providers' deliveries build no URLs.
 */
class RequestContext implements VerifyContext {
  constructor(
    private readonly deps: Deps,
    private readonly lookups: Lookups,
    private readonly fastifyRequest: FastifyRequest,
    private readonly key: string,
    private readonly claims: TokenClaim[],
  ) {}

  isKnownOutboundMessage(integrationKey: string, externalMessageId: string): Promise<boolean> {
    return this.lookups.isKnownOutboundMessage(integrationKey, externalMessageId);
  }

  accountBySecret(integrationKey: string, secret: string): Promise<string | undefined> {
    return this.lookups.accountBySecret(integrationKey, secret);
  }

  now(): Date {
    return this.deps.now();
  }

  async claimOnce(integrationKey: string, token: string, expiresAt: Date): Promise<boolean> {
    const claimed = await claimWebhookToken(this.deps.db, integrationKey, token, expiresAt, this.deps.now());
    if (claimed) this.claims.push({ integrationKey, token });
    return claimed;
  }

  get request(): VerifyRequest {
    return verifyRequest(this.deps, this.fastifyRequest, this.key);
  }
}

/** What a verifier may know of the request besides its headers and body. */
function verifyRequest(deps: Deps, request: FastifyRequest, key: string): VerifyRequest {
  return {
    publicUrl: deps.config.publicUrl + request.url,
    requestUrl: `${request.protocol}://${request.host}${request.url}`,
    warn: (message) => request.log.warn({ integrationKey: key }, message),
  };
}

async function verify(
  deps: Deps,
  adapter: ChannelAdapter,
  body: RawBody,
  request: FastifyRequest,
  ctx: VerifyContext,
  settings: IntegrationConfig | undefined,
): Promise<Verification> {
  const key = adapter.key;
  const cfg = settings ?? deps.config.integrations[key] ?? {};
  if (NEVER_ACCEPTED.has(key)) return { ok: false };
  // Postgres text cannot hold NUL, and no provider delivery but a binary part contains one:
  // refused like a bad signature, unless the integration posts binary parts (attachments).
  if (!adapter.binaryParts && body.text.includes('\u0000')) return { ok: false };
  if (cfg.skipVerify) return { ok: true, via: 'skipped' };
  let result: Verification;
  try {
    result = await adapter.verify(body, request.headers, cfg, ctx);
  } catch (err) {
    request.log.warn({ err, integrationKey: key }, 'webhook verification error');
    result = { ok: false };
  }
  if (!result.ok && deps.config.skipWebhookVerify) {
    request.log.warn({ integrationKey: key }, `${key}: webhook signature unverified, accepted because INBOX_SKIP_WEBHOOK_VERIFY=true`);
    return { ok: true, via: 'skipped' };
  }
  return result;
}
