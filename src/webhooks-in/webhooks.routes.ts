import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { bytesToKeep, type ChannelAdapter, hubChallenge, parseBody, type Query, storableText } from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import type { IntegrationConfig } from '../config.js';
import { findWebhookConnection, type WebhookConnection } from '../connections/connections.queries.js';
import { openWebhookSecrets, verificationSettings } from '../connections/webhook-secrets.js';
import { openingKeys } from '../crypto/secret-box.js';
import { uuid7 } from '../crypto/uuid7.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { acceptRawBodies, rawBodyFrom } from '../http/raw-body.js';
import { currentTraceparent } from '../tracing/tracing.js';
import type { InboxWriter } from './inbox-writer.js';
import { deliveryVerifier, logDelivery, type TokenClaim } from './verify-delivery.js';

const Params = Type.Object({
  integrationKey: Type.String({ description: "the integration key configured in the provider's dashboard (whatsapp, sms, …)" }),
});
const ConnectionParams = Type.Object({
  integrationKey: Params.properties.integrationKey,
  connectionKey: Type.String({ maxLength: 64, description: "the connection's key (ck_…), from its webhookUrl" }),
});
const Queued = Type.Object(
  { status: Type.Literal('queued') },
  { title: 'Queued', description: 'stored and queued; the provider may forget it' },
);
/**
 * The answer to an accepted delivery, as the schema's serializer would write it: sent as text
 * with its content type set, Fastify skips the serializer (and the runtime check of the
 * literal that fast-json-stringify compiles into it) on the hottest route.
 */
const QUEUED_ANSWER = { contentType: 'application/json; charset=utf-8', body: '{"status":"queued"}' };
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
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; writer: InboxWriter }> = async (app, { deps, writer }) => {
  const verifier = deliveryVerifier(deps);

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

  /**
   * The connection a connection URL names, and what its deliveries are verified with; its
   * secrets open here, so a row whose seal does not open refuses every delivery (401) and the
   * operator is told why, never the sender.
   */
  const connectionTarget = async (request: FastifyRequest, adapter: ChannelAdapter, connectionKey: string): Promise<ConnectionTarget> => {
    const connection = await findWebhookConnection(deps.db, adapter.key, connectionKey);
    if (!connection) throw errors.notFound('connection');
    let own = null;
    if (connection.webhook_secrets_sealed !== null) {
      try {
        own = openWebhookSecrets(openingKeys(deps), connection.id, connection.webhook_secrets_sealed);
      } catch (err) {
        request.log.warn({ err, connectionId: connection.id }, "the connection's webhook secrets do not open; set them again");
        throw errors.invalidApiKey('webhook signature or shared secret is missing or wrong');
      }
    }
    const settings = verificationSettings(deps.config.integrations[adapter.key] ?? {}, connection.managed_by, own);
    return { connection, settings };
  };

  const ingest = async (request: FastifyRequest, reply: FastifyReply, key: string, connectionKey?: string) => {
    const adapter = adapterFor(key);
    if (!adapter) throw errors.notFound('integration');
    const target = connectionKey === undefined ? undefined : await connectionTarget(request, adapter, connectionKey);
    const body = rawBodyFrom(request);
    const rawBody = adapter.binaryParts ? storableText(body.text) : body.text;
    if (deps.config.logWebhooks) logDelivery(request, key, rawBody);
    const claims: TokenClaim[] = [];
    const verification = await verifier.verify(adapter, body, request, claims, target?.settings);
    if (!verification.ok) {
      deps.metrics.countDelivery(key, 'rejected');
      throw errors.invalidApiKey(verification.reason ?? 'webhook signature or shared secret is missing or wrong');
    }
    // On a connection's URL a secret that names another account (a Telegram bot's) is not its.
    const account = target ? target.connection.external_account_id : verification.account;
    if (verification.account !== undefined && verification.account !== account) {
      await verifier.release(request, claims);
      deps.metrics.countDelivery(key, 'rejected');
      throw errors.invalidApiKey('webhook signature or shared secret is missing or wrong');
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
        // The one account the worker lets the delivery touch (an event naming another is dropped).
        verifiedAccount: account ?? null,
        traceparent: currentTraceparent(),
      });
    } catch (err) {
      // Not stored: the provider sends it again with the same one-time token, which must pass.
      await verifier.release(request, claims);
      throw err;
    }
    deps.metrics.countDelivery(key, 'accepted');
    const answer = adapter.acceptedAnswer ?? QUEUED_ANSWER;
    return reply.code(200).type(answer.contentType).send(answer.body);
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

  // A connection's own URL (docs/connections.md): the same pipeline, verified with its secrets.
  app.get(
    '/:integrationKey/:connectionKey',
    {
      schema: {
        summary: "Answer a provider subscription challenge on a connection's URL",
        params: ConnectionParams,
        description:
          "Meta's keys compare `hub.verify_token` with the connection's `webhookVerifyToken`; others as on /webhooks/:integrationKey, with the connection's secrets. 404 for an unknown connection or a refused challenge.",
        response: { 200: { content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const adapter = adapterFor(request.params.integrationKey);
      if (!adapter) throw errors.notFound('integration');
      const { connection, settings } = await connectionTarget(request, adapter, request.params.connectionKey);
      const query = request.query as Query;
      const value =
        connection.webhook_verify_token !== null
          ? hubChallenge(query, connection.webhook_verify_token)
          : adapter.challenge(query, request.headers, settings);
      if (value === null) throw errors.challengeRefused();
      return reply.type('text/plain; charset=utf-8').send(value);
    },
  );
  app.post(
    '/:integrationKey/:connectionKey',
    {
      schema: {
        ...ingestSchema,
        summary: "Receive a provider delivery on a connection's URL",
        params: ConnectionParams,
        description:
          "As POST /webhooks/:integrationKey, verified with the connection's own webhookSecrets (a connection the operator made falls back on INBOX_INTEGRATIONS); its events apply to that connection only. 404 for an unknown connection.",
      },
    },
    (request, reply) => ingest(request, reply, request.params.integrationKey, request.params.connectionKey),
  );
};

interface ConnectionTarget {
  connection: WebhookConnection;
  settings: IntegrationConfig;
}
