import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireOperator } from '../auth/auth.js';
import { listAllConnections } from '../connections/connections.queries.js';
import { connectionResource } from '../connections/connections.service.js';
import { BigId, IntId } from '../http/ids.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { cursorPage, cursorQuerySchema, offsetMeta, parseCursorQuery, parseOffsetQuery, TENANTS_MAX_LIMIT, type CursorQuery } from '../http/pagination.js';
import { findThread, listMessages } from '../messaging/messaging.queries.js';
import { messageResource } from '../messaging/messaging.routes.js';
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
          workspaceId: Type.Optional(IntId),
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

  // A thread's transcript, for support staff: cursor pages, as in the tenant's own list.
  app.get(
    '/tenants/:id/threads/:threadId/messages',
    {
      schema: {
        params: Type.Object({ id: IntId, threadId: BigId }),
        querystring: cursorQuerySchema,
      },
    },
    async (request) => {
      const thread = await findThread(deps.db, request.params.id, request.params.threadId);
      if (!thread) throw errors.notFound('thread');
      const { limit, cursor } = parseCursorQuery(request.query as CursorQuery);
      const rows = await listMessages(deps.db, thread.id, limit, cursor);
      const page = cursorPage(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
      return envelope(request, page.items.map(messageResource), page.meta);
    },
  );
};
