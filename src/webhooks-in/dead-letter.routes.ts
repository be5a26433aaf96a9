import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { findInboxRow, listAppInbox } from './inbox.queries.js';
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

export const DEAD_LETTER_DEFAULT_LIMIT = 100;
export const DEAD_LETTER_MAX_LIMIT = 500;

/** `/v1/admin/webhook-inbox`: a workspace admin inspects and requeues its own deliveries. */
export const deadLetterRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/webhook-inbox',
    {
      schema: {
        summary: "List the app's dead letters",
        querystring: Type.Object({
          status: Type.Optional(inboxStatusFilter('absent or empty: dead_letter; failed and received list rows still in flight')),
          limit: Type.Optional(Type.String({ description: 'how many rows: default 100' })),
        }),
        response: { 200: Envelope(Type.Array(InboxSummary)) },
      },
    },
    async (request) => {
      const { appId } = tenantOf(request);
      const raw = Number(request.query.limit);
      const limit = Number.isFinite(raw) && raw >= 1 ? Math.min(Math.floor(raw), DEAD_LETTER_MAX_LIMIT) : DEAD_LETTER_DEFAULT_LIMIT;
      const rows = await listAppInbox(deps.db, appId, request.query.status || 'dead_letter', limit);
      return envelope(request, rows.map(inboxSummary));
    },
  );

  app.get(
    '/webhook-inbox/:id',
    { schema: { summary: 'Get one delivery with its body', params: InboxRowParams, response: { 200: Envelope(InboxResource) } } },
    async (request) => {
      const { appId } = tenantOf(request);
      const row = isUuid(request.params.id) ? await findInboxRow(deps.db, request.params.id, appId) : undefined;
      if (!row) throw errors.notFound('webhook inbox row');
      return envelope(request, inboxResource(row));
    },
  );

  app.post(
    '/webhook-inbox/:id/requeue',
    {
      schema: {
        summary: 'Requeue a failed or dead-lettered delivery',
        description:
          "Puts the row back to `received` with its attempts reset and queues it; answers the status it had before. Another app's row → 404.",
        params: InboxRowParams,
        headers: RequeueHeaders,
        response: { 200: Envelope(RequeueResult) },
      },
    },
    async (request, reply) => {
      const { appId } = tenantOf(request);
      const result = await requeueDelivery(deps, { appId }, request.params.id, request.headers['idempotency-key']);
      return reply.code(200).send(envelope(request, result));
    },
  );
};
