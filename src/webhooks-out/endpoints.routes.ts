import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { changesOf, recordAudit, trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope, StringEnum } from '../http/schemas.js';
import { listAttempts, listDeliveries } from './deliveries.queries.js';
import { deleteEndpoint, findEndpoint, listEndpoints, updateEndpoint } from './endpoints.queries.js';
import {
  DELIVERY_STATUSES,
  DeliveryResource,
  deliveryResource,
  EndpointCreate,
  EndpointPatch,
  EndpointResource,
  EndpointWithSecret,
  endpointResource,
} from './endpoints.resources.js';
import {
  checkPatch,
  createEndpoint,
  DEFAULT_GRACE_SECONDS,
  MAX_GRACE_SECONDS,
  redeliver,
  rotateSecret,
  sendTest,
} from './endpoints.service.js';

const Params = Type.Object({ id: Type.With(BigId, { description: 'the webhook endpoint id' }) });
const DeliveryParams = Type.Object({ id: Type.With(BigId, { description: 'the delivery id (x-service-delivery, webhook-id)' }) });

/**
 * `/v1/webhook-endpoints`: the workspace's outbound webhook endpoints, their delivery log and
 * redelivery (docs/outbound-webhooks.md). Workspace admins only — a JWT admin or an `admin`
 * API key — reads included: the log shows what the workspace's receivers answered.
 */
export const endpointsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/',
    { schema: { summary: 'List webhook endpoints', querystring: CursorQuery, response: { 200: CursorPage(EndpointResource) } } },
    async (request) => {
      const page = await listEndpoints(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
      return envelope(request, page.items.map(endpointResource), page.meta);
    },
  );

  app.post(
    '/',
    {
      schema: {
        summary: 'Create a webhook endpoint',
        description: 'Answers 201 with the endpoint and its signing `secret`, shown only here.',
        body: EndpointCreate,
        response: { 201: Envelope(EndpointWithSecret) },
      },
    },
    async (request, reply) => {
      const endpoint = await createEndpoint(deps, tenantOf(request).workspaceId, request.body, trailOf(request));
      return reply.code(201).send(envelope(request, endpoint));
    },
  );

  app.get(
    '/:id',
    { schema: { summary: 'Get a webhook endpoint', params: Params, response: { 200: Envelope(EndpointResource) } } },
    async (request) => {
      const row = await findEndpoint(deps.db, tenantOf(request).workspaceId, request.params.id);
      if (!row) throw errors.notFound('webhook endpoint');
      return envelope(request, endpointResource(row));
    },
  );

  app.patch(
    '/:id',
    {
      schema: {
        summary: 'Update a webhook endpoint',
        description:
          'Changes url, events, description, signatureScheme or enabled; `enabled: true` re-enables a disabled endpoint and clears its reason.',
        params: Params,
        body: EndpointPatch,
        response: { 200: Envelope(EndpointResource) },
      },
    },
    async (request) => {
      const { signatureScheme, ...rest } = request.body;
      const patch = checkPatch(deps, { ...rest, scheme: signatureScheme });
      const workspaceId = tenantOf(request).workspaceId;
      const row = await deps.db.transaction().execute(async (trx) => {
        const before = await findEndpoint(trx, workspaceId, request.params.id, true);
        const after = before && (await updateEndpoint(trx, workspaceId, request.params.id, patch, deps.now()));
        if (!before || !after) throw errors.notFound('webhook endpoint');
        const changes = changesOf(endpointResource(before), endpointResource(after));
        await recordAudit(trx, trailOf(request), 'webhook_endpoint.updated', { type: 'webhook_endpoint', id: after.id }, changes);
        return after;
      });
      return envelope(request, endpointResource(row));
    },
  );

  app.delete(
    '/:id',
    { schema: { summary: 'Delete a webhook endpoint', params: Params, response: { 200: Envelope(Deleted) } } },
    async (request) => {
      await deps.db.transaction().execute(async (trx) => {
        if (!(await deleteEndpoint(trx, tenantOf(request).workspaceId, request.params.id))) throw errors.notFound('webhook endpoint');
        await recordAudit(trx, trailOf(request), 'webhook_endpoint.deleted', { type: 'webhook_endpoint', id: request.params.id });
      });
      return deleted(request, request.params.id);
    },
  );

  app.post(
    '/:id/rotate-secret',
    {
      schema: {
        summary: "Rotate an endpoint's signing secret",
        description:
          'Answers the new secret once. During the grace period (default 24 h) the old secret signs too: in `x-service-signature-previous` (scheme service) or as a second `v1,` signature (scheme standard).',
        params: Params,
        querystring: Type.Object({
          graceSeconds: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_GRACE_SECONDS, description: 'how long the old secret still signs (default 86400)' }),
          ),
        }),
        response: { 200: Envelope(EndpointWithSecret) },
      },
    },
    async (request) =>
      envelope(
        request,
        await rotateSecret(
          deps,
          tenantOf(request).workspaceId,
          request.params.id,
          request.query.graceSeconds ?? DEFAULT_GRACE_SECONDS,
          trailOf(request),
        ),
      ),
  );

  app.post(
    '/:id/test',
    {
      schema: {
        summary: 'Send a test ping',
        description: 'Queues a `ping` event to this endpoint whatever its event filter, even when disabled; answers 202 with the delivery.',
        params: Params,
        response: { 202: Envelope(DeliveryResource) },
      },
    },
    async (request, reply) => {
      return reply.code(202).send(envelope(request, await sendTest(deps, tenantOf(request).workspaceId, request.params.id)));
    },
  );

  app.get(
    '/:id/deliveries',
    {
      schema: {
        summary: "List an endpoint's deliveries",
        params: Params,
        querystring: Type.Object({
          ...CursorQuery.properties,
          status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'only deliveries in this status' })),
        }),
        response: { 200: CursorPage(DeliveryResource) },
      },
    },
    async (request) => {
      const workspaceId = tenantOf(request).workspaceId;
      if (!(await findEndpoint(deps.db, workspaceId, request.params.id))) throw errors.notFound('webhook endpoint');
      const page = await listDeliveries(deps.db, request.params.id, parseCursorQuery(request.query), request.query.status);
      const attempts = await listAttempts(
        deps.db,
        page.items.map((d) => d.id),
      );
      return envelope(
        request,
        page.items.map((d) => deliveryResource(d, attempts)),
        page.meta,
      );
    },
  );

  app.post(
    '/deliveries/:id/redeliver',
    {
      schema: {
        summary: 'Redeliver a delivery',
        description: "Sends a delivery again with the same delivery id (the receiver's dedupe key); its earlier attempts stay in the log.",
        params: DeliveryParams,
        response: { 202: Envelope(DeliveryResource) },
      },
    },
    async (request, reply) => {
      return reply.code(202).send(envelope(request, await redeliver(deps, tenantOf(request).workspaceId, request.params.id)));
    },
  );
};
