import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { listConnections } from './connections.queries.js';
import { ConnectionResource, connectionResource } from './connections.service.js';
import { CursorPage } from '../http/schemas.js';

/** `GET /v1/connections`: the caller's channel accounts, cursor pages. */
export const connectionRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/', { preHandler: requireAuth(deps), schema: { querystring: CursorQuery, response: { 200: CursorPage(ConnectionResource) } } }, async (request) => {
    const page = await listConnections(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
    return envelope(request, page.items.map(connectionResource), page.meta);
  });
};
