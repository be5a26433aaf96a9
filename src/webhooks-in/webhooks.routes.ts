import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  bytesToKeep,
  firstHeader,
  parseBody,
  type Query,
  storableText,
  type Verification,
  type VerifyContext,
  type VerifyRequest,
  type WebhookAdapter,
} from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import { findAccountBySecretHash } from '../connections/telegram-webhook.queries.js';
import { sha256Hex } from '../crypto/hmac.js';
import { uuid7 } from '../crypto/uuid7.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { acceptRawBodies, type RawBody, rawBodyFrom } from '../http/raw-body.js';
import { findOutboundByExternalId } from '../messaging/messaging.queries.js';
import type { InboxWriter } from './inbox-writer.js';
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
 * `x-vendor-auth`/`x-service-signature`): logging it would hand out the credential, so only
 * its first 4 characters are logged, enough to tell which secret a sender used.
 */
const BEARER_SECRET_HEADERS = new Set(['email']);

function loggedSignature(key: string, headers: FastifyRequest['headers']): string | null {
  const value = firstHeader(headers, LOGGED_SIGNATURE_HEADERS);
  if (value === undefined) return null;
  return BEARER_SECRET_HEADERS.has(key) ? `${value.slice(0, 4)}…` : value;
}
/** Integrations that can never be accepted, whatever the flags say (docs/webhooks.md, "Integrations"). */
const NEVER_ACCEPTED = new Set(['livechat', 'ai']);

const Params = Type.Object({
  integrationKey: Type.String({ description: "the integration key configured in the provider's dashboard (whatsapp, sms, …)" }),
});
const Queued = Type.Object(
  { status: Type.Literal('queued') },
  { title: 'Queued', description: 'stored and queued; the provider may forget it' },
);
const ingestSchema = {
  summary: 'Receive a provider delivery',
  params: Params,
  description: 'A provider delivery, verified over its raw bytes (any content type), stored, queued and answered at once.',
  response: { 200: Queued },
};

/**
 * `/webhooks/*`: provider deliveries. Not under /v1 and never versioned: these URLs live in
 * third parties' dashboards. The body is never parsed before verification; it arrives as
 * bytes, signatures are checked over those bytes, and every content type is stored as the
 * UTF-8 text of them (plus the bytes themselves when that text cannot hold them and the
 * integration posts binary parts).
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; writer: InboxWriter }> = async (app, { deps, writer }) => {
  const isKnownOutboundMessage = async (integrationKey: string, id: string) =>
    (await findOutboundByExternalId(deps.db, integrationKey, [id])).length > 0;
  const accountBySecret = (integrationKey: string, secret: string) => findAccountBySecretHash(deps.db, integrationKey, sha256Hex(secret));
  /**
   * A request's context: the one-time tokens it claims are its own, to give back if it is not
   * stored. `request` is built only when a verifier reads it (Twilio's signed URL), so the
   * other providers' deliveries build no URLs.
   */
  const contextFor = (claims: { integrationKey: string; token: string }[], request: FastifyRequest, key: string): VerifyContext => ({
    isKnownOutboundMessage,
    accountBySecret,
    now: deps.now,
    async claimOnce(integrationKey, token, expiresAt) {
      const claimed = await claimWebhookToken(deps.db, integrationKey, token, expiresAt, deps.now());
      if (claimed) claims.push({ integrationKey, token });
      return claimed;
    },
    get request() {
      return verifyRequest(deps, request, key);
    },
  });

  acceptRawBodies(app);

  app.get(
    '/:integrationKey',
    {
      schema: {
        summary: 'Answer a provider subscription challenge',
        params: Params,
        description: 'Subscription challenge: the echoed value as text/plain (compared byte for byte), or 404.',
        response: { 200: { content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const adapter = adapterFor(request.params.integrationKey);
      if (!adapter) throw errors.notFound('integration');
      const cfg = deps.config.integrations[adapter.key] ?? {};
      const value = adapter.challenge(request.query as Query, request.headers, cfg);
      if (value === null) throw errors.challengeRefused();
      return reply.type('text/plain; charset=utf-8').send(value);
    },
  );

  const ingest = async (request: FastifyRequest, reply: FastifyReply, key: string) => {
    const adapter = adapterFor(key);
    if (!adapter) throw errors.notFound('integration');
    const body = rawBodyFrom(request);
    const rawBody = adapter.binaryParts ? storableText(body.text) : body.text;
    if (deps.config.logWebhooks) {
      request.log.info({ integrationKey: key, signature: loggedSignature(key, request.headers), rawBody }, 'inbound webhook');
    }
    const claims: { integrationKey: string; token: string }[] = [];
    const verification = await verify(deps, adapter, body, request, contextFor(claims, request, key));
    if (!verification.ok) {
      deps.metrics.webhookDeliveries.inc({ integration: key, outcome: 'rejected' });
      throw errors.invalidApiKey(verification.reason ?? 'webhook signature or shared secret is missing or wrong');
    }
    // A verifier that parsed hands its payload over; otherwise the raw body is parsed here,
    // so adapters that verify raw bytes still get a payload (docs/webhooks.md). Either way it is the
    // raw body as the adapter parses it, so it is not stored again: readers derive it.
    const payload = verification.payload !== undefined ? verification.payload : parseBody(adapter, rawBody);
    const event = payload === undefined || payload === null ? undefined : adapter.eventName(payload);
    try {
      await writer.write({
        id: uuid7(),
        integrationKey: key,
        event: event === undefined ? null : event.replaceAll('\0', '\uFFFD'),
        rawBody,
        // Only for bodies that carry files (JSON providers skip even the check), and only when
        // the text lost bytes: the files inside are read again from these (docs/attachments.md).
        rawBytes: adapter.binaryParts ? bytesToKeep(rawBody, body) : null,
        verification: verification.via,
        verifiedAccount: verification.account ?? null,
      });
    } catch (err) {
      // Not stored: the provider sends it again with the same one-time token, which must pass.
      if (claims.length > 0)
        await releaseWebhookTokens(deps.db, claims).catch((e: unknown) => request.log.warn({ err: e }, 'token release failed'));
      throw err;
    }
    deps.metrics.webhookDeliveries.inc({ integration: key, outcome: 'accepted' });
    if (adapter.acceptedAnswer) return reply.code(200).type(adapter.acceptedAnswer.contentType).send(adapter.acceptedAnswer.body);
    return reply.code(200).send({ status: 'queued' });
  };

  app.post(
    '/email',
    {
      schema: {
        summary: 'Receive an e-mail provider delivery',
        response: ingestSchema.response,
        description: 'Alias of POST /webhooks/email as an integration key (docs/webhooks.md).',
      },
    },
    (request, reply) => ingest(request, reply, 'email'),
  );
  app.post('/:integrationKey', { schema: ingestSchema }, (request, reply) => ingest(request, reply, request.params.integrationKey));
};

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
  adapter: WebhookAdapter,
  body: RawBody,
  request: FastifyRequest,
  ctx: VerifyContext,
): Promise<Verification> {
  const key = adapter.key;
  const cfg = deps.config.integrations[key] ?? {};
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
