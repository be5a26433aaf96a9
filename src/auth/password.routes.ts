import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope } from '../http/schemas.js';
import { NewPassword } from './account-links.routes.js';
import { requireAuth, userOf } from './auth.js';
import { changePassword } from './passwords.service.js';

export const PasswordChangeBody = Type.Object(
  { currentPassword: Type.String({ minLength: 1, maxLength: 1024 }), newPassword: NewPassword },
  { additionalProperties: false },
);
export const PasswordChanged = Type.Object({ endedSessions: Type.Integer({ description: 'the other sessions that ended' }) });

/** `POST /v1/users/me/password`: a signed-in person changes their own password (docs/accounts.md). */
export const passwordRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/password',
    {
      preValidation: requireAuth(deps, { kinds: ['user'] }),
      schema: {
        summary: 'Change your password',
        description:
          'Needs a signed-in session (JWT). A wrong `currentPassword` → 403 (and counts as a failed login); a new password under 12 characters or equal to the e-mail → 422. ' +
          'Every other session of the user ends; this one goes on.',
        body: PasswordChangeBody,
        response: { 200: Envelope(PasswordChanged) },
      },
    },
    async (request) => {
      const auth = userOf(request);
      return envelope(request, await changePassword(deps, auth, request.body, request.ip));
    },
  );
};
