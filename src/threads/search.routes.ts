import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { contentUrl } from '../attachments/attachments.resources.js';
import { messageResources } from '../attachments/message-attachments.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { inspectSearch, searchMessages } from './search.queries.js';

export const SEARCH_MAX_LENGTH = 256;

export const SearchQuery = Type.Object({
  ...CursorQuery.properties,
  q: Type.String({
    minLength: 1,
    maxLength: SEARCH_MAX_LENGTH,
    description: 'words to find (web search syntax: "a phrase", `or`, `-excluded`); at least one word that is not excluded',
  }),
});

/**
 * `GET /v1/messages/search`: full-text search over the workspace's messages. Private notes are
 * found by people (a JWT or personal-access token) only, never by an API key of any scope
 * (docs/conversations.md).
 */
export const searchRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/messages/search',
    {
      schema: {
        summary: 'Search the workspace’s messages by words, newest first',
        querystring: SearchQuery,
        response: { 200: CursorPage(MessageResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const page = parseCursorQuery(request.query);
      const db = readFrom(deps, request);
      const { nodes, indexable } = await inspectSearch(db, request.query.q);
      if (nodes === 0) throw errors.validation('q: no words to search for (only operators or quotes)');
      if (!indexable) throw errors.validation('q: at least one word must be searched for, not only excluded (-word)');
      const found = await searchMessages(db, auth, request.query.q, { includePrivate: auth.kind !== 'api_key' }, page);
      return envelope(request, await messageResources(db, found.items, contentUrl(deps.config.publicUrl)), found.meta);
    },
  );
};
