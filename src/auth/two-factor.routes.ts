import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope } from '../http/schemas.js';
import { personOf, requireAuth, tenantOf, userOf } from './auth.js';
import { disableTwoFactor, enableTwoFactor, resetTwoFactor, setupTwoFactor, twoFactorStatus } from './two-factor.service.js';

export const TwoFactorStatus = Type.Object(
  {
    enabled: Type.Boolean(),
    recoveryCodesLeft: Type.Integer({ minimum: 0, description: 'unused recovery codes; 0 while two-factor sign-in is off' }),
  },
  { title: 'TwoFactorStatus' },
);
/** What turning two-factor sign-in off (or an admin's reset) answers: the status it left. */
const TWO_FACTOR_OFF = { enabled: false, recoveryCodesLeft: 0 };
export const TwoFactorSetup = Type.Object(
  {
    secret: Type.String({ description: 'base32, for typing into an authenticator app' }),
    otpauthUrl: Type.String({ description: 'the same as an `otpauth://totp/` address, for a QR code' }),
  },
  { title: 'TwoFactorSetup' },
);
export const TwoFactorEnabled = Type.Object(
  { recoveryCodes: Type.Array(Type.String(), { description: '10 codes, each good once instead of a code; shown only here' }) },
  { title: 'TwoFactorEnabled' },
);
const UserParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the user id' }) });

/**
 * Two-factor sign-in (TOTP, docs/security.md): a signed-in user's own setup, enable and
 * disable, and an admin's reset of another user's. Setup, enable and the status are reachable
 * before two-factor sign-in is on, where the workspace requires it.
 */
export const twoFactorRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const own = requireAuth(deps, { kinds: ['user'], before2fa: true });

  app.get(
    '/me/2fa',
    {
      preValidation: requireAuth(deps, { kinds: ['user'], before2fa: true }),
      schema: { summary: 'Whether your two-factor sign-in is on', response: { 200: Envelope(TwoFactorStatus) } },
    },
    async (request) => envelope(request, await twoFactorStatus(deps, personOf(request).userId)),
  );

  app.post(
    '/me/2fa/setup',
    {
      preValidation: own,
      schema: {
        summary: 'Start setting up two-factor sign-in',
        description:
          'A new TOTP secret (SHA-1, 6 digits, 30 s) and its `otpauth://` address for an authenticator app. Nothing is on until ' +
          '`enable` gets a code of it. 409 while two-factor sign-in is on.',
        response: { 200: Envelope(TwoFactorSetup) },
      },
    },
    async (request) => envelope(request, await setupTwoFactor(deps, userOf(request).userId)),
  );

  app.post(
    '/me/2fa/enable',
    {
      preValidation: own,
      schema: {
        summary: 'Turn two-factor sign-in on',
        description:
          'A current code of the set-up secret turns it on and answers 10 recovery codes, shown only here. A wrong code → 422; ' +
          'the 6th wrong code in 15 minutes → 429.',
        body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false }),
        response: { 200: Envelope(TwoFactorEnabled) },
      },
    },
    async (request) => envelope(request, await enableTwoFactor(deps, userOf(request).userId, request.body.code, trailOf(request))),
  );

  app.post(
    '/me/2fa/disable',
    {
      preValidation: requireAuth(deps, { kinds: ['user'] }),
      schema: {
        summary: 'Turn two-factor sign-in off',
        description: 'Needs your password (a wrong one → 403, counted like a failed login). The secret and recovery codes are deleted.',
        body: Type.Object({ password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false }),
        response: { 200: Envelope(TwoFactorStatus) },
      },
    },
    async (request) => {
      await disableTwoFactor(deps, userOf(request).userId, request.body.password, trailOf(request));
      return envelope(request, TWO_FACTOR_OFF);
    },
  );

  app.post(
    '/:id/2fa/reset',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: "Reset a user's two-factor sign-in",
        description:
          'Admins: turns it off for a user of the workspace who lost their authenticator; they set it up again after signing in.',
        params: UserParams,
        response: { 200: Envelope(TwoFactorStatus) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      await resetTwoFactor(deps, auth.workspaceId, auth.kind === 'api_key' ? null : auth.userId, request.params.id, trailOf(request));
      return envelope(request, TWO_FACTOR_OFF);
    },
  );
};
