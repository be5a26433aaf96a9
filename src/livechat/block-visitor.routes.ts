import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { blockVisitor } from './block-visitor.service.js';

export const Blocked = Type.Object(
  { threadId: Type.Integer(), visitorsBlocked: Type.Integer({ description: 'visitor tokens ended now (0 when they had already ended)' }) },
  { title: 'VisitorBlocked' },
);

/** `POST /v1/threads/:id/block-visitor`: an agent ends a live chat visitor's token (docs/livechat.md). */
export const blockVisitorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/threads/:id/block-visitor',
    {
      // POST: the `write` scope (or `admin`), or a user. No body is needed; an empty object is the only one taken.
      preValidation: [
        requireAuth(deps),
        async (request) => {
          request.body ??= {};
        },
      ],
      schema: {
        summary: 'Block the live chat visitor of a thread',
        description: 'Blocks the live chat visitor of a thread: its token ends at once, its sockets close (4003), its next request is 401.',
        params: Type.Object({ id: Type.With(BigId, { description: 'the live chat thread whose visitor is blocked' }) }),
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: Envelope(Blocked) },
      },
    },
    async (request) => envelope(request, await blockVisitor(deps, tenantOf(request), request.params.id)),
  );
};
