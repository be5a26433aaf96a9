import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { findIdempotentResponse, lockIdempotencyKey, saveIdempotentResponse } from '../idempotency/idempotency.queries.js';
import { MessageResource, messageResource } from '../messaging/messaging.resources.js';
import { publishEvent } from '../realtime/publish.js';
import { writeOutbox } from '../webhooks-out/outbox.js';
import { findReplyThread, insertReply } from './replies.queries.js';
import { enqueueSend } from './send-message.queue.js';

const PREVIEW_LENGTH = 140;
/** Channels that never send: the AI integration only ever receives. */
const CANNOT_SEND = new Set(['ai']);

/**
 * `POST /v1/threads/:id/messages {text}`: an agent's reply. The message row (`queued`) and its
 * send job commit together and the answer is 202 at once; the worker sends it and moves it to
 * `sent` or `failed`. With `Idempotency-Key` a retried POST answers the first answer again and
 * sends nothing more.
 */
export const replyRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/threads/:id/messages',
    {
      // POST: the `write` scope (or `admin`); a `read` key gets 403 before the body is read.
      preValidation: requireAuth(deps),
      schema: {
        summary: 'Reply in a thread',
        description: 'Queues `{ text }` for the thread\'s channel and answers 202 with the queued message. Needs the `write` scope. Send an `Idempotency-Key` so a retry never sends twice. Unknown body fields are refused (422).',
        params: Type.Object({ id: Type.With(BigId, { description: 'the thread id' }) }),
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({ minLength: 1, maxLength: 255, description: 'the same key from the same workspace within 24 h answers the first answer again and sends nothing' }),
          ),
        }),
        body: Type.Object({ text: Type.String({ minLength: 1, maxLength: 4096 }) }),
        response: { 202: Envelope(MessageResource) },
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const key = request.headers['idempotency-key'];
      const requestLine = `reply ${request.params.id} ${sha256Hex(request.body.text)}`;
      const message = await deps.db.transaction().execute(async (trx) => {
        if (key !== undefined) {
          await lockIdempotencyKey(trx, auth.appId, key);
          const seen = await findIdempotentResponse(trx, auth.appId, key);
          if (seen) {
            if (seen.request !== requestLine) throw errors.conflict('this idempotency-key was used for another request');
            return seen.response as ReturnType<typeof messageResource>;
          }
        }
        const thread = await findReplyThread(trx, auth.workspaceId, request.params.id);
        if (!thread) throw errors.notFound('thread');
        if (CANNOT_SEND.has(thread.integration_key)) throw errors.validation('this channel cannot send');
        const now = deps.now();
        const row = await insertReply(
          trx,
          { workspaceId: thread.workspace_id, threadId: thread.id, connectionId: thread.connection_id, text: request.body.text, preview: request.body.text.slice(0, PREVIEW_LENGTH) },
          now,
        );
        await enqueueSend(deps.boss, trx, { messageId: row.id, attempt: 1 });
        await publishEvent(trx, {
          type: 'message.created',
          workspaceId: row.workspace_id,
          data: { id: row.id, threadId: row.thread_id, direction: 'outbound', status: row.status, preview: row.text.slice(0, PREVIEW_LENGTH) },
        });
        const answer = messageResource(row);
        await writeOutbox(deps.boss, trx, [{ type: 'message.created', workspaceId: row.workspace_id, data: answer }], now);
        if (key !== undefined) await saveIdempotentResponse(trx, { space: auth.appId, key, request: requestLine, statusCode: 202, response: answer });
        return answer;
      });
      return reply.code(202).send(envelope(request, message));
    },
  );
};
