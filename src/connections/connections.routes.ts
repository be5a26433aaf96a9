import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { cursorPage, cursorQuerySchema, parseCursorQuery, type CursorQuery } from '../http/pagination.js';
import { listConnections } from './connections.queries.js';
import { connectionResource } from './connections.service.js';

/** `GET /v1/connections`: the caller's channel accounts, cursor pages. */
export const connectionRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/', { preHandler: requireAuth(deps), schema: { querystring: cursorQuerySchema } }, async (request) => {
    const { workspaceId } = tenantOf(request);
    const { limit, cursor } = parseCursorQuery(request.query as CursorQuery);
    const rows = await listConnections(deps.db, workspaceId, limit, cursor);
    const page = cursorPage(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return envelope(request, page.items.map(connectionResource), page.meta);
  });
};
