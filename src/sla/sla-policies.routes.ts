import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { IntId } from '../http/ids.js';
import { Deleted, Envelope } from '../http/schemas.js';
import { listPolicies } from './sla-policies.queries.js';
import { SlaPolicyCreate, SlaPolicyPatch, SlaPolicyResource, slaPolicyResource } from './sla-policies.resources.js';
import { changeSlaPolicy, createSlaPolicy, removeSlaPolicy } from './sla-policies.service.js';

const Params = Type.Object({ id: Type.With(IntId, { description: 'the SLA policy id' }) });

/**
 * `/v1/sla-policies` (docs/sla.md): admins (a JWT admin or an `admin` key) read and write
 * them. A workspace has a handful, listed whole in position order.
 */
export const slaPoliciesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/',
    { schema: { summary: 'List SLA policies in position order', response: { 200: Envelope(Type.Array(SlaPolicyResource)) } } },
    async (request) => envelope(request, (await listPolicies(deps.db, tenantOf(request).workspaceId)).map(slaPolicyResource)),
  );

  app.post(
    '/',
    { schema: { summary: 'Create an SLA policy', body: SlaPolicyCreate, response: { 201: Envelope(SlaPolicyResource) } } },
    async (request, reply) => {
      const created = await createSlaPolicy(deps, trailOf(request), tenantOf(request).workspaceId, request.body);
      reply.code(201);
      return envelope(request, created);
    },
  );

  app.patch(
    '/:id',
    {
      schema: { summary: 'Change an SLA policy', params: Params, body: SlaPolicyPatch, response: { 200: Envelope(SlaPolicyResource) } },
    },
    async (request) =>
      envelope(request, await changeSlaPolicy(deps, trailOf(request), tenantOf(request).workspaceId, request.params.id, request.body)),
  );

  app.delete(
    '/:id',
    {
      schema: { summary: 'Delete an SLA policy; threads keep the clocks they have', params: Params, response: { 200: Envelope(Deleted) } },
    },
    async (request) => {
      await removeSlaPolicy(deps, trailOf(request), tenantOf(request).workspaceId, request.params.id);
      return deleted(request, request.params.id);
    },
  );
};
