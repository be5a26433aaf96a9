import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope } from '../http/schemas.js';
import { acceptInvite } from '../users/invites.service.js';
import { UserResource, userResource } from '../users/users.resources.js';
import { completeSetup, setupOpen } from '../workspaces/first-run.js';
import { WorkspaceResource } from '../workspaces/workspaces.service.js';
import { confirmPasswordReset, PASSWORD_MIN, requestPasswordReset } from './passwords.service.js';

const Token = Type.String({ minLength: 1, maxLength: 200, description: 'the `token` of the link’s fragment (`#token=…`)' });
/** What a person chooses: at least 12 characters, and never the account’s e-mail (422). */
export const NewPassword = Type.String({
  minLength: PASSWORD_MIN,
  maxLength: 1024,
  description: `at least ${PASSWORD_MIN} characters, not the account’s e-mail address`,
});
const Email = Type.String({ format: 'email', maxLength: 320 });

export const PasswordResetBody = Type.Object({ email: Email }, { additionalProperties: false });
export const PasswordResetConfirmBody = Type.Object({ token: Token, newPassword: NewPassword }, { additionalProperties: false });
export const InviteAcceptBody = Type.Object({ token: Token, password: NewPassword }, { additionalProperties: false });
export const SetupStatus = Type.Object({ open: Type.Boolean() }, { title: 'SetupStatus' });
export const SetupBody = Type.Object(
  {
    token: Token,
    workspaceName: Type.String({ minLength: 1, maxLength: 200 }),
    name: Type.String({ minLength: 1, maxLength: 200, description: 'the admin’s display name' }),
    email: Email,
    password: NewPassword,
  },
  { additionalProperties: false },
);
export const SetupResult = Type.Object({ workspace: WorkspaceResource, user: UserResource }, { title: 'SetupResult' });
export const ResetAccepted = Type.Object({ message: Type.String() });

/**
 * `/api/user/*` routes that a link opens, with no session (docs/accounts.md): password
 * resets, invites and the first-run setup. Each link works once.
 */
export const accountLinksRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/password-reset',
    {
      schema: {
        summary: 'Ask for a password-reset link',
        description:
          'Always 202, whether or not the address has an account: when it has (and is active), a link to `/app/reset#token=…` valid 1 hour is mailed. ' +
          '5 requests per e-mail address per hour (429). 503 `mail_unavailable` when the service has no mail (INBOX_SMTP_URL).',
        body: PasswordResetBody,
        response: { 202: Envelope(ResetAccepted) },
      },
    },
    async (request, reply) => {
      await requestPasswordReset(deps, request.body.email);
      reply.code(202);
      return envelope(request, { message: 'if this address has an account, a link to reset its password is on its way' });
    },
  );

  app.post(
    '/password-reset/confirm',
    {
      schema: {
        summary: 'Set a new password with a reset link',
        description:
          'Spends the link (once) and ends every session and personal-access token of the user. An invalid, used or expired link → 401; a bad password → 422 and the link stays good.',
        body: PasswordResetConfirmBody,
        response: { 200: Envelope(UserResource) },
      },
    },
    async (request) => envelope(request, userResource(await confirmPasswordReset(deps, request.body, request.ip))),
  );

  app.post(
    '/invite/accept',
    {
      schema: {
        summary: 'Accept an invite: choose a password',
        description:
          'Sets the invited user’s password and activates them; the link (7 days) works once. Then sign in with `/api/user/login`.',
        body: InviteAcceptBody,
        response: { 200: Envelope(UserResource) },
      },
    },
    async (request) => envelope(request, userResource(await acceptInvite(deps, request.body, request.ip))),
  );

  app.get(
    '/setup',
    {
      schema: {
        summary: 'Whether the first-run setup is open',
        description: '`open` is true while no workspace exists (the setup link the service logged at start works then).',
        response: { 200: Envelope(SetupStatus) },
      },
    },
    async (request) => envelope(request, { open: await setupOpen(deps) }),
  );

  app.post(
    '/setup',
    {
      schema: {
        summary: 'First run: create the first workspace and its admin',
        description:
          'With the token of the setup link the service logs at start while no workspace exists. Creates the workspace and an admin user; ' +
          'then sign in with `/api/user/login`. Once any workspace exists → 409.',
        body: SetupBody,
        response: { 201: Envelope(SetupResult) },
      },
    },
    async (request, reply) => {
      const done = await completeSetup(deps, request.body, request.ip);
      reply.code(201);
      return envelope(request, { workspace: done.workspace, user: userResource(done.user) });
    },
  );
};
