import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { contentUrl } from '../attachments/attachments.resources.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { parseThreadFilters, ThreadFilterQuery } from './thread-filters.js';
import { countThreads, findThread, listThreads } from './threads.queries.js';
import { ThreadCountsResource, ThreadResource, threadResource } from './threads.resources.js';
import { transcriptPage } from './threads.service.js';

const ThreadParams = Type.Object({ id: Type.With(BigId, { description: 'the thread id' }) });
const ThreadsQuery = Type.Object({ ...CursorQuery.properties, ...ThreadFilterQuery });
const { assigneeId: _eachCount, ...CountFilters } = ThreadFilterQuery;
const CountsQuery = Type.Object(CountFilters, { additionalProperties: false });

/** Tenant lists of what the workers made: threads and their messages (cursor pages; contacts: src/contacts/). */
export const threadsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/threads',
    {
      schema: {
        summary: "List the workspace's threads, most recently active first, optionally filtered",
        querystring: ThreadsQuery,
        response: { 200: CursorPage(ThreadResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const filters = parseThreadFilters(request.query, auth);
      const page = await listThreads(readFrom(deps, request, { live: true }), auth, filters, parseCursorQuery(request.query));
      return envelope(request, page.items.map(threadResource), page.meta);
    },
  );

  // The console's tabs (docs/conversations.md, "Counts per view"): each count is about an
  // assignee, so the list's other filters apply and `assigneeId` is not one of them.
  app.get(
    '/threads/counts',
    {
      schema: {
        summary: 'Count the threads of each view (mine, unassigned, all) under the list filters',
        querystring: CountsQuery,
        response: { 200: Envelope(ThreadCountsResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const filters = parseThreadFilters(request.query, auth);
      const me = auth.kind === 'api_key' ? null : auth.userId;
      return envelope(request, await countThreads(readFrom(deps, request, { live: true }), auth, filters, me));
    },
  );

  app.get(
    '/threads/:id',
    { schema: { summary: 'Get a thread', params: ThreadParams, response: { 200: Envelope(ThreadResource) } } },
    async (request) => {
      const thread = await findThread(deps.db, tenantOf(request), request.params.id);
      if (!thread) throw errors.notFound('thread');
      return envelope(request, threadResource(thread));
    },
  );

  app.get(
    '/threads/:id/messages',
    {
      schema: {
        summary: "List a thread's messages",
        params: ThreadParams,
        querystring: CursorQuery,
        response: { 200: CursorPage(MessageResource) },
      },
    },
    async (request) => {
      const page = await transcriptPage(
        readFrom(deps, request, { live: true }),
        tenantOf(request),
        request.params.id,
        request.query,
        contentUrl(deps.config.publicUrl),
      );
      return envelope(request, page.items, page.meta);
    },
  );
};
