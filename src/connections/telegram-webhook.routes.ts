import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { setTelegramWebhook } from './telegram-webhook.service.js';

const TelegramWebhook = Type.Object(
  {
    connectionId: Type.Integer(),
    url: Type.String({ description: 'the URL Telegram now posts the bot’s updates to' }),
  },
  { title: 'TelegramWebhook' },
);

/** `POST /v1/connections/:id/telegram/webhook {}` (workspace admins): a new secret, given to Telegram. */
export const telegramWebhookRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/:id/telegram/webhook',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Point a Telegram bot at this service',
        description:
          'Makes a new webhook secret, calls Telegram’s setWebhook with <INBOX_PUBLIC_URL>/webhooks/telegram and that secret, and keeps the secret’s hash; updates carrying it are the connection’s.',
        params: Type.Object({ id: Type.With(BigId, { description: 'the telegram connection id' }) }),
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: { 200: Envelope(TelegramWebhook) },
      },
    },
    async (request) => envelope(request, await setTelegramWebhook(deps, tenantOf(request).workspaceId, request.params.id)),
  );
};
