import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { contentUrl } from '../attachments/attachments.resources.js';
import { requireOperator } from '../auth/auth.js';
import { listAllConnections } from '../connections/connections.queries.js';
import { ConnectionResource, connectionResource } from '../connections/connections.service.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId, IntId } from '../http/ids.js';
import { CursorQuery, OffsetQuery, parseOffsetQuery, TENANTS_MAX_LIMIT } from '../http/pagination.js';
import { CursorPage, OffsetPage } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { transcriptPage } from '../threads/threads.service.js';
import { listWorkspaces } from '../workspaces/workspaces.queries.js';
import { WorkspaceResource, workspaceResource } from '../workspaces/workspaces.service.js';

const OperatorConnection = Type.Object({ ...ConnectionResource.properties, workspaceId: Type.Integer() }, { title: 'OperatorConnection' });

/** `/v1/operator/*`: platform-wide lists in offset pages (docs/api.md, "Pagination"). */
export const operatorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireOperator(deps));

  app.get(
    '/tenants',
    { schema: { summary: 'List every tenant', querystring: OffsetQuery, response: { 200: OffsetPage(WorkspaceResource) } } },
    async (request) => {
      const page = await listWorkspaces(readFrom(deps, request), parseOffsetQuery(request.query, TENANTS_MAX_LIMIT));
      return envelope(request, page.items.map(workspaceResource), page.meta);
    },
  );

  app.get(
    '/connections',
    {
      schema: {
        summary: 'List every connection',
        querystring: Type.Object({
          page: Type.Optional(Type.String({ description: 'the page, 1-based (absent or < 1 → 1)' })),
          limit: Type.Optional(Type.String({ description: 'page size: default 50, clamped into [1, 200]' })),
          workspaceId: Type.Optional(Type.With(IntId, { description: "only this workspace's connections" })),
          integrationKey: Type.Optional(Type.String({ maxLength: 64, description: 'only connections of this integration key' })),
        }),
        response: { 200: OffsetPage(OperatorConnection) },
      },
    },
    async (request) => {
      const { workspaceId, integrationKey } = request.query;
      const page = await listAllConnections(readFrom(deps, request), { workspaceId, integrationKey }, parseOffsetQuery(request.query));
      return envelope(
        request,
        page.items.map((r) => ({
          ...connectionResource(r, { publicUrl: deps.config.publicUrl, admin: true }),
          workspaceId: r.workspace_id,
        })),
        page.meta,
      );
    },
  );

  // A thread's transcript, for support staff: cursor pages, as in the tenant's own list.
  app.get(
    '/tenants/:id/threads/:threadId/messages',
    {
      schema: {
        summary: "Read a thread's transcript",
        params: Type.Object({
          id: Type.With(IntId, { description: 'the workspace (tenant) id' }),
          threadId: Type.With(BigId, { description: 'the thread id' }),
        }),
        querystring: CursorQuery,
        response: { 200: CursorPage(MessageResource) },
      },
    },
    async (request) => {
      const url = contentUrl(deps.config.publicUrl);
      const staff = { kind: 'operator' as const, workspaceId: request.params.id };
      const page = await transcriptPage(readFrom(deps, request), staff, request.params.threadId, request.query, url);
      return envelope(request, page.items, page.meta);
    },
  );
};
