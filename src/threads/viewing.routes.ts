import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { personOf, requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { publishEvent } from '../realtime/publish.js';
import { findThread } from './threads.queries.js';

export const ViewingBody = Type.Object(
  { typing: Type.Optional(Type.Boolean({ description: 'true while you type a reply or note' })) },
  { additionalProperties: false },
);

/** What a ping answers: the `thread.viewing` event's data it announced. */
const Viewing = Type.Object({ threadId: Type.Integer(), userId: Type.Integer(), typing: Type.Boolean() }, { title: 'Viewing' });

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
        response: { 200: Envelope(Viewing) },
      },
    },
    async (request) => {
      const auth = personOf(request);
      const thread = await findThread(deps.db, tenantOf(request), request.params.id);
      if (!thread) throw errors.notFound('thread');
      const viewing = { threadId: thread.id, userId: auth.userId, typing: request.body?.typing === true };
      await publishEvent(deps.db, { type: 'thread.viewing', workspaceId: auth.workspaceId, data: viewing });
      return envelope(request, viewing);
    },
  );
};
