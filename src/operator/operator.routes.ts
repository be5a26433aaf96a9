import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireOperator } from '../auth/auth.js';
import { listAllConnections } from '../connections/connections.queries.js';
import { connectionResource } from '../connections/connections.service.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { offsetMeta, parseOffsetQuery, TENANTS_MAX_LIMIT } from '../http/pagination.js';
import { listWorkspaces } from '../workspaces/workspaces.queries.js';
import { workspaceResource } from '../workspaces/workspaces.service.js';

const OffsetQuery = Type.Object({ page: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) });

/** `/v1/operator/*`: platform-wide lists in offset pages (SPEC §8.1). */
export const operatorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preHandler', requireOperator(deps));

  app.get('/tenants', { schema: { querystring: OffsetQuery } }, async (request) => {
    const page = parseOffsetQuery(request.query, TENANTS_MAX_LIMIT);
    const { rows, total } = await listWorkspaces(deps.db, page.limit, page.offset);
    return envelope(request, rows.map(workspaceResource), offsetMeta(page, total));
  });

  app.get(
    '/connections',
    {
      schema: {
        querystring: Type.Object({
          page: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          workspaceId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })),
          integrationKey: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (request) => {
      const page = parseOffsetQuery(request.query);
      const { workspaceId, integrationKey } = request.query;
      const { rows, total } = await listAllConnections(deps.db, { workspaceId, integrationKey }, page.limit, page.offset);
      return envelope(
        request,
        rows.map((r) => ({ ...connectionResource(r), workspaceId: r.workspace_id })),
        offsetMeta(page, total),
      );
    },
  );
};
