import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireOperator } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { parseOffsetQuery } from '../http/pagination.js';
import { Envelope, OffsetPage } from '../http/schemas.js';
import { findInboxRow, listAllInbox } from './inbox.queries.js';
import {
  InboxResource,
  InboxRowParams,
  InboxSummary,
  inboxResource,
  inboxStatusFilter,
  inboxSummary,
  RequeueHeaders,
  RequeueResult,
} from './inbox.resources.js';
import { requeueDelivery } from './requeue.js';

/**
 * `/v1/operator/webhook-inbox`: every app's deliveries, unresolved ones included, and those
 * spanning several apps, which belong to no tenant and so only the operator can requeue.
 */
export const operatorInboxRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/webhook-inbox',
    {
      preValidation: requireOperator(deps),
      schema: {
        summary: "List every app's deliveries",
        querystring: Type.Object({
          page: Type.Optional(Type.String({ description: 'the page, 1-based (absent or < 1 → 1)' })),
          limit: Type.Optional(Type.String({ description: 'page size: default 50, clamped into [1, 200]' })),
          status: Type.Optional(inboxStatusFilter('only rows in this status (absent or empty: every status)')),
          integrationKey: Type.Optional(Type.String({ maxLength: 64, description: 'only rows received on this integration key' })),
          appId: Type.Optional(Type.String({ maxLength: 64, description: 'only rows of this app' })),
        }),
        response: { 200: OffsetPage(InboxSummary) },
      },
    },
    async (request) => {
      const { status, integrationKey, appId } = request.query;
      const filter = { status: status || undefined, integrationKey, appId };
      const page = await listAllInbox(readFrom(deps, request), filter, parseOffsetQuery(request.query));
      return envelope(request, page.items.map(inboxSummary), page.meta);
    },
  );

  app.get(
    '/webhook-inbox/:id',
    {
      preValidation: requireOperator(deps),
      schema: { summary: 'Get any delivery with its body', params: InboxRowParams, response: { 200: Envelope(InboxResource) } },
    },
    async (request) => {
      const row = isUuid(request.params.id) ? await findInboxRow(deps.db, request.params.id, null) : undefined;
      if (!row) throw errors.notFound('webhook inbox row');
      return envelope(request, inboxResource(row));
    },
  );

  app.post(
    '/webhook-inbox/:id/requeue',
    {
      preValidation: requireOperator(deps),
      schema: {
        summary: 'Requeue any failed or dead-lettered delivery',
        description: "Operator requeue of any app's row (unattributed rows included); answers the status it had before.",
        params: InboxRowParams,
        headers: RequeueHeaders,
        response: { 200: Envelope(RequeueResult) },
      },
    },
    async (request, reply) => {
      const result = await requeueDelivery(deps, { operator: true }, request.params.id, request.headers['idempotency-key']);
      return reply.code(200).send(envelope(request, result));
    },
  );
};
