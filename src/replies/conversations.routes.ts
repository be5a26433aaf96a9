import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { ThreadResource } from '../threads/threads.resources.js';
import { AttachmentIds } from './replies.routes.js';
import { startConversation } from './start-conversation.js';
import { TemplateReply } from './template-reply.js';

export const StartBody = Type.Object(
  {
    connectionId: Type.With(BigId, { description: 'the connection to speak through' }),
    to: Type.String({
      minLength: 1,
      maxLength: 320,
      description:
        'the recipient on that channel: a phone number in E.164 (SMS, aggregator, WhatsApp), a WhatsApp id or WAHA chat id, an e-mail address',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the contact's name, kept if the contact has none" })),
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: 'the first message (free form); with attachments, their caption' }),
    ),
    attachmentIds: Type.Optional(AttachmentIds),
    template: Type.Optional(
      Type.With(TemplateReply, { description: 'WhatsApp Cloud: a synced, APPROVED template instead of `text` (docs/replies.md)' }),
    ),
  },
  { additionalProperties: false },
);

export const Started = Type.Object({ thread: ThreadResource, message: MessageResource }, { title: 'StartedConversation' });

/**
 * `POST /v1/conversations {connectionId, to, name?, text? | template?, attachmentIds?}`: the business speaks
 * first. Answers 202 with the thread and the queued message; the replies' sender sends it.
 */
export const conversationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/conversations',
    {
      // POST: the `write` scope (or `admin`); a `read` key gets 403 before the body is read.
      preValidation: requireAuth(deps),
      schema: {
        summary: 'Start a conversation',
        description:
          'Finds or creates the contact by `to` (stored normalised: E.164, a WhatsApp id, a lower-case address) and its thread on the connection, and queues `{ text }`, `{ attachmentIds }` (with `text` as their caption, or alone) or `{ template }` (alone). WhatsApp Cloud takes free text only while the reply window is open (else 422 `window_closed`); Messenger, Instagram, Telegram and live chat cannot speak first (422). Needs the `write` scope. Send an `Idempotency-Key` so a retry never sends twice.',
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: 'the same key from the same workspace within 24 h answers the first answer again and sends nothing',
            }),
          ),
        }),
        body: StartBody,
        response: { 202: Envelope(Started) },
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const started = await startConversation(deps, {
        appId: auth.appId,
        workspaceId: auth.workspaceId,
        connectionId: request.body.connectionId,
        to: request.body.to,
        name: request.body.name,
        text: request.body.text,
        template: request.body.template,
        attachmentIds: request.body.attachmentIds,
        authorId: auth.kind === 'api_key' ? null : auth.userId,
        reader: auth,
        idempotencyKey: request.headers['idempotency-key'],
      });
      return reply.code(202).send(envelope(request, started));
    },
  );
};
