import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { MAX_REPLY_ATTACHMENTS } from '../channels/attachment-limits.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId, IntId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { MAX_MENTIONS, postReply } from './replies.service.js';
import { TemplateReply } from './template-reply.js';

/** Uploads to send with a message; a reply and a new conversation take them alike. */
export const AttachmentIds = Type.Array(BigId, {
  minItems: 1,
  maxItems: MAX_REPLY_ATTACHMENTS,
  description:
    'uploads (POST /v1/attachments) to send: stored, of this workspace, on no message yet. WhatsApp, Messenger, Instagram, WAHA, SMS and Telegram take one; e-mail and live chat several; other channels none (docs/attachments.md)',
});

export const ReplyBody = Type.Object(
  {
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'the reply; with attachments, their caption' })),
    attachmentIds: Type.Optional(AttachmentIds),
    template: Type.Optional(
      Type.With(TemplateReply, { description: 'WhatsApp Cloud: a synced, APPROVED template instead of `text` (docs/replies.md)' }),
    ),
    private: Type.Optional(Type.Boolean({ description: 'true: a private note for colleagues, stored and never sent (201)' })),
    cc: Type.Optional(
      Type.Array(Type.String({ minLength: 3, maxLength: 254 }), {
        maxItems: 50,
        description: "e-mail threads only: the Cc (default: the last inbound mail's Cc); [] sends none",
      }),
    ),
    bcc: Type.Optional(
      Type.Array(Type.String({ minLength: 3, maxLength: 254 }), { maxItems: 50, description: 'e-mail threads only: blind copies' }),
    ),
    subject: Type.Optional(
      Type.String({ minLength: 1, maxLength: 998, description: "e-mail threads only (default: `Re: ` and the thread's subject)" }),
    ),
    mentions: Type.Optional(
      Type.Array(Type.With(IntId, { description: 'a user of the workspace' }), {
        minItems: 1,
        maxItems: MAX_MENTIONS,
        description: 'notes only (`private: true`): the users the note names; each gets a `mentioned` notification',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * `POST /v1/threads/:id/messages {text? | template?, attachmentIds?, private?}`: an agent's reply, or with `private: true`
 * a note that is stored (201) and never sent. The message row (`queued`) and its
 * send job commit together and the answer is 202 at once; the worker sends it and moves it to
 * `sent` or `failed`. With `Idempotency-Key` a retried POST answers the first answer again and
 * sends nothing more.
 */
export const repliesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/threads/:id/messages',
    {
      // POST: the `write` scope (or `admin`); a `read` key gets 403 before the body is read.
      preValidation: requireAuth(deps),
      schema: {
        summary: 'Reply in a thread',
        description:
          "Queues `{ text }`, `{ attachmentIds }` (with `text` as their caption, or alone) or `{ template }` (WhatsApp Cloud; alone) for the thread's channel and answers 202 with the queued message. Needs the `write` scope. Send an `Idempotency-Key` so a retry never sends twice. Unknown body fields are refused (422).",
        params: Type.Object({ id: Type.With(BigId, { description: 'the thread id' }) }),
        headers: Type.Object({
          'idempotency-key': Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description: 'the same key from the same workspace within 24 h answers the first answer again and sends nothing',
            }),
          ),
        }),
        body: ReplyBody,
        response: { 201: Envelope(MessageResource), 202: Envelope(MessageResource) },
      },
    },
    async (request, reply) => {
      const auth = tenantOf(request);
      const message = await postReply(deps, {
        auth,
        threadId: request.params.id,
        text: request.body.text,
        template: request.body.template,
        attachmentIds: request.body.attachmentIds,
        private: request.body.private === true,
        mentions: request.body.mentions,
        email: { cc: request.body.cc, bcc: request.body.bcc, subject: request.body.subject },
        idempotencyKey: request.headers['idempotency-key'],
      });
      return reply.code(request.body.private === true ? 201 : 202).send(envelope(request, message));
    },
  );
};
