import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { ConnectionResource, connectionResource } from './connections.service.js';
import { listConnectionTemplates, startTemplateSync, TemplateResource } from './templates.service.js';

const Params = Type.Object({ id: Type.With(BigId, { description: 'the connection id' }) });

/** WhatsApp Cloud message templates of a connection (docs/replies.md, "Templates"). */
export const templatesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/:id/templates',
    {
      preValidation: requireAuth(deps),
      schema: {
        summary: "List a connection's synced templates",
        params: Params,
        response: { 200: Envelope(Type.Array(TemplateResource)) },
      },
    },
    async (request) => envelope(request, await listConnectionTemplates(deps, tenantOf(request).workspaceId, request.params.id)),
  );

  // It spends the connection's credentials on the provider: workspace admins only.
  app.post(
    '/:id/templates/sync',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: "Sync a connection's templates from WhatsApp",
        description:
          'Answers 202 with the connection (`templatesSync.status: "running"`) and queues a `sync-templates` job (at most one waiting per connection) that reads every page of the WABA\'s `message_templates`. `templatesSync` then says `succeeded`, or `failed` with the error (the previous list is kept).',
        params: Params,
        response: { 202: Envelope(ConnectionResource) },
      },
    },
    async (request, reply) => {
      const row = await startTemplateSync(deps, tenantOf(request).workspaceId, request.params.id);
      return reply.code(202).send(envelope(request, connectionResource(row, { publicUrl: deps.config.publicUrl, admin: true })));
    },
  );
};
