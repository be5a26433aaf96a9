import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { personTrail, recordAudit } from '../audit/audit.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { Envelope, Meta, NoContent } from '../http/schemas.js';
import { findUserByEmail } from '../users/users.queries.js';
import { UserResource, userResource } from '../users/users.resources.js';
import { optionalAuth, personOf, requireAuth, userOf } from './auth.js';
import { clearRefreshCookie, readRefreshCookie, setRefreshCookie } from './refresh-cookie.js';
import { consumeAuthCode, findLiveSession, findUser, holdPassword } from './sessions.queries.js';
import {
  AUTH_CODE_SECONDS,
  admitLoginAttempt,
  endSessions,
  forgetSuccessfulLogin,
  issueAuthCode,
  readRefreshToken,
  refreshSession,
  resumeSession,
  type SessionInfo,
  signRefreshToken,
  startSession,
  verifyPassword,
} from './sessions.service.js';
import { refusePasswordWhereSsoOnly } from './sso.js';
import { requireSecondFactor } from './two-factor.service.js';

/** The login response: the user, the bearer token, its expiry and a one-time auth code. */
export const LoginResponse = Type.Object(
  {
    data: UserResource,
    access_token: Type.String({ description: 'JWT bearer token' }),
    token_expiry: Type.Integer({ description: 'unix seconds' }),
    auth_code: Type.String({ description: 'one-time code native apps exchange through generate-token' }),
    meta: Meta,
  },
  { title: 'LoginResponse' },
);
export const AuthCode = Type.Object(
  { auth_code: Type.String(), expires_in: Type.Integer({ description: 'seconds' }) },
  { title: 'AuthCode' },
);

/** `/api/user/*`: login and sessions (docs/auth.md). Field names keep the contract's snake_case. */
export const userRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const withMeta = <T extends object>(request: { id: string }, body: T) => ({ ...body, meta: { requestId: request.id } });
  // Logout is reachable before two-factor sign-in is on where the workspace requires it;
  // refresh is not (403 `2fa_required`): a new token would open nothing more than the old one.
  const bearer = requireAuth(deps, { kinds: ['user'], before2fa: true });
  const refreshBearer = requireAuth(deps, { kinds: ['user'] });
  const secure = () => deps.config.publicUrl.startsWith('https:');
  /** Remembered: kept until the session ends; otherwise until the browser closes. */
  const giveRefreshCookie = (reply: FastifyReply, session: SessionInfo) =>
    setRefreshCookie(reply, signRefreshToken(app.jwt, session, deps.now()), {
      secure: secure(),
      maxAgeSeconds: session.remember ? (session.expiresAt.getTime() - deps.now().getTime()) / 1000 : undefined,
    });

  app.post(
    '/login',
    {
      schema: {
        summary: 'Log in',
        description:
          'Email, password and `remember`; answers the user, `access_token` (JWT), `token_expiry` (unix seconds) and a one-time `auth_code`. ' +
          'Also sets the console’s `HttpOnly` refresh cookie (kept 30 days with `remember`, else until the browser closes; docs/auth.md). ' +
          'Failed attempts are rate limited (429 with retry-after). With two-factor sign-in on, a right password without `otp` → 401 `otp_required` (docs/security.md). ' +
          'Where the workspace enforces single sign-on, a right password → 401 `sso_required` (admins with two-factor sign-in excepted).',
        body: Type.Object({
          email: Type.String({ minLength: 1, maxLength: 320 }),
          password: Type.String({ minLength: 1, maxLength: 1024 }),
          remember: Type.Optional(Type.Boolean()),
          otp: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'with two-factor sign-in on: a current code or a recovery code (without it → 401 `otp_required`)',
            }),
          ),
        }),
        response: { 200: LoginResponse },
      },
    },
    async (request, reply) => {
      const email = request.body.email.trim().toLowerCase();
      const attempt = await admitLoginAttempt(deps, email, request.ip);
      const user = await findUserByEmail(deps.db, email);
      // The same answer, after the same work, whether or not the e-mail exists, and for a
      // deactivated user (who must learn nothing a wrong password would not tell). A failure
      // is written to the audit log either way: of the user's workspace, or of none.
      if (!(await verifyPassword(user, request.body.password)) || !user?.active) {
        const trail = user
          ? personTrail(user, request.ip)
          : { workspaceId: null, actor: { type: 'system' as const, id: null }, ip: request.ip };
        await recordAudit(deps.db, trail, 'sign_in.failed', user ? { type: 'user', id: user.id } : null);
        throw errors.unauthorized('invalid e-mail or password');
      }
      await forgetSuccessfulLogin(deps, attempt);
      const trail = personTrail(user, request.ip);
      await refusePasswordWhereSsoOnly(deps, user, trail);
      await requireSecondFactor(deps, user, request.body.otp, trail);
      const started = await deps.db.transaction().execute(async (trx) => {
        // The password checked is still the user's: a reset or change meanwhile refuses it,
        // as it would a moment later, rather than leave a session that outlives the change.
        if (!(await holdPassword(trx, user.id, user.password_hash))) throw errors.unauthorized('invalid e-mail or password');
        const done = await startSession(deps, app.jwt, user, request.body.remember ?? false, trx);
        await recordAudit(trx, trail, 'sign_in.succeeded', { type: 'user', id: user.id });
        return done;
      });
      giveRefreshCookie(reply, started.session);
      return withMeta(request, started.answer);
    },
  );

  app.get(
    '/user',
    {
      preValidation: requireAuth(deps, { allowPat: true, kinds: ['user', 'pat'], before2fa: true }),
      schema: { summary: 'The current user', response: { 200: Envelope(UserResource) } },
    },
    async (request) => {
      const user = await findUser(deps.db, personOf(request).userId);
      if (!user) throw errors.unauthorized();
      return envelope(request, userResource(user));
    },
  );

  app.post(
    '/refresh',
    {
      // No credential header but the refresh cookie: the console's way (the handler reads it).
      // Any credential header: the contract's bearer refresh, exactly as for programs.
      preValidation: async (request, reply) => {
        const headers = request.headers;
        if (headers.authorization === undefined && headers['x-api-key'] === undefined && readRefreshCookie(request) !== undefined) return;
        await refreshBearer(request, reply);
      },
      schema: {
        summary: 'Refresh the session token',
        description:
          'With a bearer JWT: answers the login response shape with a new token and session; the token it replaces stops working. ' +
          'With no credential header but the console’s `HttpOnly` refresh cookie (set at login): a new token of the same, still ' +
          'live session (docs/auth.md). A bad or ended cookie → 401 and the cookie is cleared. A user the workspace requires ' +
          'two-factor sign-in of, without it on → 403 `2fa_required`.',
        response: { 200: LoginResponse },
      },
    },
    async (request, reply) => {
      if (!request.auth) return withMeta(request, await refreshFromCookie(request, reply));
      const auth = userOf(request);
      const session = await findLiveSession(deps.db, auth.sessionId, deps.now());
      const user = await findUser(deps.db, auth.userId);
      if (!session || !user) throw errors.unauthorized('invalid or expired token');
      // The replaced token stops working: its session ends in the transaction that starts the new one.
      const refreshed = await refreshSession(deps, app.jwt, user, session.session_id, session.remember);
      if (!refreshed) throw errors.unauthorized('invalid or expired token');
      // The console refreshes by bearer too (to extend its session): its cookie follows the
      // session it named, else a reload would find that session ended.
      const cookie = readRefreshCookie(request);
      if (cookie !== undefined && readRefreshToken(app.jwt, cookie)?.sessionId === auth.sessionId)
        giveRefreshCookie(reply, refreshed.session);
      return withMeta(request, refreshed.answer);
    },
  );

  /**
   * The cookie alone is a credential here and nowhere else. Beyond `SameSite=Strict` and
   * POST, a browser's own word that the request comes from another site (`Sec-Fetch-Site`,
   * which a page cannot forge) refuses it: a sibling subdomain counts as the same site.
   */
  async function refreshFromCookie(request: FastifyRequest, reply: FastifyReply) {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin')
      throw errors.forbidden('the refresh cookie is accepted from the console’s own pages only');
    const claims = readRefreshToken(app.jwt, readRefreshCookie(request) ?? '');
    const session = claims && (await findLiveSession(deps.db, claims.sessionId, deps.now()));
    const user = session && String(session.user_id) === claims.userId ? await findUser(deps.db, session.user_id) : undefined;
    if (!session || !user) {
      clearRefreshCookie(reply, secure());
      throw errors.unauthorized('the session has ended; sign in again');
    }
    if (session.two_factor_missing) throw errors.twoFactorRequired();
    return resumeSession(deps, app.jwt, user, {
      id: session.session_id,
      userId: session.user_id,
      remember: session.remember,
      expiresAt: session.expires_at,
    });
  }

  app.post(
    '/logout',
    {
      preValidation: bearer,
      schema: {
        summary: 'Log out',
        description:
          'Ends the session of the bearer token (204); the token stops working at once, and the console’s refresh cookie is cleared.',
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const auth = userOf(request);
      await deps.db
        .transaction()
        .execute((trx) => endSessions(deps, trx, { id: auth.userId, workspaceId: auth.workspaceId }, auth.sessionId, 'logout'));
      clearRefreshCookie(reply, secure());
      reply.code(204);
    },
  );

  // A personal-access token must never turn into a full session: an auth code is exchanged
  // for a JWT, which would outlive the token's revocation and reach every route. Both code
  // routes refuse one outright rather than ignore it.
  const refusePat = async (request: FastifyRequest) => {
    if (request.auth?.kind === 'pat')
      throw errors.forbidden('a personal-access token cannot start a session; use a signed-in session (JWT)');
  };

  app.post(
    '/generate-code',
    {
      preValidation: [optionalAuth(deps, { allowPat: true }), refusePat],
      schema: {
        summary: 'Generate a one-time auth code',
        description:
          'An `auth_code` that lives 60 s, works once and dies with the session that asked for it (its logout, revocation or refresh); ' +
          'refused for personal-access tokens.',
        response: { 200: Envelope(AuthCode) },
      },
    },
    async (request) => {
      const auth = request.auth;
      if (auth?.kind !== 'user') throw errors.unauthorized('a signed-in user is required to generate a code');
      const code = await issueAuthCode(deps.db, { userId: auth.userId, sessionId: auth.sessionId }, false, deps.now());
      return envelope(request, { auth_code: code, expires_in: AUTH_CODE_SECONDS });
    },
  );

  app.post(
    '/generate-token',
    {
      preValidation: [optionalAuth(deps, { allowPat: true }), refusePat],
      schema: {
        summary: 'Exchange an auth code for a session',
        description:
          'Trades a one-time `auth_code` for the login response shape; also sets the console’s `HttpOnly` refresh cookie, as login does.',
        body: Type.Object({ auth_code: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: LoginResponse },
      },
    },
    async (request, reply) => {
      const spent = await consumeAuthCode(deps.db, sha256Hex(request.body.auth_code), deps.now());
      if (!spent) throw errors.unauthorized('invalid, used or expired auth code');
      const user = await findUser(deps.db, spent.user_id);
      if (!user?.active) throw errors.unauthorized('invalid, used or expired auth code');
      const started = await startSession(deps, app.jwt, user, spent.remember);
      // The console's single sign-on ends here: the cookie keeps its session across reloads,
      // as a password sign-in's does. Programs that trade codes ignore it.
      giveRefreshCookie(reply, started.session);
      return withMeta(request, started.answer);
    },
  );
};
