import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireOperator } from '../auth/auth.js';
import { listAllConnections } from '../connections/connections.queries.js';
import { connectionResource } from '../connections/connections.service.js';
import { BigId, IntId } from '../http/ids.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { CursorQuery, OffsetQuery, parseOffsetQuery, TENANTS_MAX_LIMIT } from '../http/pagination.js';
import { transcriptPage } from '../messaging/messaging.routes.js';
import { listWorkspaces } from '../workspaces/workspaces.queries.js';
import { workspaceResource } from '../workspaces/workspaces.service.js';

/** `/v1/operator/*`: platform-wide lists in offset pages (SPEC §8.1). */
export const operatorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preHandler', requireOperator(deps));

  app.get('/tenants', { schema: { querystring: OffsetQuery } }, async (request) => {
    const page = await listWorkspaces(deps.db, parseOffsetQuery(request.query, TENANTS_MAX_LIMIT));
    return envelope(request, page.items.map(workspaceResource), page.meta);
  });

  app.get(
    '/connections',
    {
      schema: {
        querystring: Type.Object({
          page: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          workspaceId: Type.Optional(IntId),
          integrationKey: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (request) => {
      const { workspaceId, integrationKey } = request.query;
      const page = await listAllConnections(deps.db, { workspaceId, integrationKey }, parseOffsetQuery(request.query));
      return envelope(request, page.items.map((r) => ({ ...connectionResource(r), workspaceId: r.workspace_id })), page.meta);
    },
  );

  // A thread's transcript, for support staff: cursor pages, as in the tenant's own list.
  app.get(
    '/tenants/:id/threads/:threadId/messages',
    {
      schema: {
        params: Type.Object({ id: IntId, threadId: BigId }),
        querystring: CursorQuery,
      },
    },
    async (request) => {
      const page = await transcriptPage(deps.db, request.params.id, request.params.threadId, request.query);
      return envelope(request, page.items, page.meta);
    },
  );
};
