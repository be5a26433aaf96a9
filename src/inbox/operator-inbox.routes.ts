import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireOperator } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { offsetMeta, parseOffsetQuery } from '../http/pagination.js';
import { listAllInbox } from './inbox.queries.js';
import { INBOX_STATUSES, inboxResource } from './inbox.resource.js';

/** `GET /v1/operator/webhook-inbox`: every app's deliveries, unresolved ones included. */
export const operatorInboxRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/webhook-inbox',
    {
      preHandler: requireOperator(deps),
      schema: {
        querystring: Type.Object({
          page: Type.Optional(Type.String()),
          limit: Type.Optional(Type.String()),
          status: Type.Optional(Type.Union(INBOX_STATUSES.map((s) => Type.Literal(s)))),
          integrationKey: Type.Optional(Type.String({ maxLength: 64 })),
          appId: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
    },
    async (request) => {
      const page = parseOffsetQuery(request.query);
      const { status, integrationKey, appId } = request.query;
      const { rows, total } = await listAllInbox(deps.db, { status, integrationKey, appId }, page.limit, page.offset);
      return envelope(request, rows.map(inboxResource), offsetMeta(page, total));
    },
  );
};
