import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { finishSsoLogin, SSO_LOGIN_SECONDS, ssoCallbackPath, startSsoLogin } from './sso.js';

/**
 * The browser's half of a single sign-on keeps the sign-in's `state` in this cookie, sent only
 * to the callback: the identity provider's redirect is a cross-site top-level GET, which
 * `SameSite=Lax` lets carry it. A callback without it (a link someone else started) is refused.
 */
const STATE_COOKIE = 'inbox_sso_state';

function stateCookie(value: string, maxAge: number, secure: boolean): string {
  return [`${STATE_COOKIE}=${value}`, `Path=${ssoCallbackPath}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`]
    .concat(secure ? ['Secure'] : [])
    .join('; ');
}

function readStateCookie(request: FastifyRequest): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === STATE_COOKIE) return pair.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/** `/auth/sso/*`: single sign-on with a workspace's OpenID Connect identity provider (docs/security.md). */
export const ssoRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const secure = () => deps.config.publicUrl.startsWith('https:');
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  app.get(
    '/:workspaceId/start',
    {
      // A browser's route, as the console's: it redirects, and docs/security.md describes it.
      schema: {
        hide: true,
        summary: 'Start single sign-on',
        description:
          'Redirects (302) to the workspace’s identity provider: authorization code flow with PKCE, `state` and `nonce`. ' +
          'The state is also kept in an `HttpOnly` cookie that only the callback reads. 404 when the workspace has no `sso`.',
        params: Type.Object({ workspaceId: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
      },
    },
    async (request, reply) => {
      const started = await startSsoLogin(deps, request.params.workspaceId);
      noStore(reply).header('set-cookie', stateCookie(started.state, SSO_LOGIN_SECONDS, secure()));
      return reply.redirect(started.url, 302);
    },
  );

  app.get(
    '/callback',
    {
      schema: {
        hide: true,
        summary: 'Single sign-on callback',
        description:
          'Where the identity provider sends the browser back. Checks the state (against the cookie, once), exchanges the code ' +
          'with the PKCE verifier, checks the ID token (signature, issuer, audience, expiry, nonce) and the verified e-mail, then ' +
          'redirects to `/app#code=<auth_code>`, which the console exchanges through `POST /api/user/generate-token`. ' +
          'A refusal answers 401 or 403 and is written to the audit log (`sign_in.sso_failed`).',
        querystring: Type.Record(Type.String(), Type.String({ maxLength: 4096 }), { maxProperties: 20 }),
      },
    },
    async (request, reply) => {
      const cookieState = readStateCookie(request);
      // The state is spent by this callback whatever its outcome: the cookie goes too.
      noStore(reply).header('set-cookie', stateCookie('', 0, secure()));
      const code = await finishSsoLogin(deps, request.query, cookieState, request.ip);
      return reply.redirect(`${deps.config.publicUrl.replace(/\/$/, '')}/app#code=${encodeURIComponent(code)}`, 302);
    },
  );
};
