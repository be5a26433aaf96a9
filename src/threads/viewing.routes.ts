import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { personOf, requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { NoContent } from '../http/schemas.js';
import { publishEvent } from '../realtime/publish.js';
import { findThread } from './threads.queries.js';

export const ViewingBody = Type.Object(
  { typing: Type.Optional(Type.Boolean({ description: 'true while you type a reply or note' })) },
  { additionalProperties: false },
);

/**
 * `POST /v1/threads/:id/viewing {typing?}` (docs/teams.md, "Collision"; `{}` while only looking): a console showing a
 * thread says so every few seconds and the workspace's sockets hear `thread.viewing`. Nothing
 * is stored: who is looking is only worth knowing while they look. A person views; an API key
 * is refused (403).
 */
export const viewingRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/threads/:id/viewing',
    {
      preValidation: requireAuth(deps, { kinds: ['user'] }),
      schema: {
        summary: 'Tell the workspace you are viewing (or typing in) a thread',
        params: Type.Object({ id: Type.With(BigId, { description: 'the thread id' }) }),
        // `{typing?}`: a ping with no body at all is "only looking", like `{}`.
        body: Type.Optional(ViewingBody),
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const auth = personOf(request);
      const thread = await findThread(deps.db, tenantOf(request), request.params.id);
      if (!thread) throw errors.notFound('thread');
      await publishEvent(deps.db, {
        type: 'thread.viewing',
        workspaceId: auth.workspaceId,
        data: { threadId: thread.id, userId: auth.userId, typing: request.body?.typing === true },
      });
      reply.code(204);
    },
  );
};
