import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { bytesToKeep, parseBody, type Query, storableText } from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import { uuid7 } from '../crypto/uuid7.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { acceptRawBodies, rawBodyFrom } from '../http/raw-body.js';
import type { InboxWriter } from './inbox-writer.js';
import { deliveryVerifier, logDelivery, type TokenClaim } from './verify-delivery.js';

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

  const ingest = async (request: FastifyRequest, reply: FastifyReply, key: string) => {
    const adapter = adapterFor(key);
    if (!adapter) throw errors.notFound('integration');
    const body = rawBodyFrom(request);
    const rawBody = adapter.binaryParts ? storableText(body.text) : body.text;
    if (deps.config.logWebhooks) logDelivery(request, key, rawBody);
    const claims: TokenClaim[] = [];
    const verification = await verifier.verify(adapter, body, request, claims);
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
      await verifier.release(request, claims);
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
