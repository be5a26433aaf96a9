import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findUser } from '../auth/sessions.queries.js';
import { endSessions } from '../auth/sessions.service.js';
import { hmacSha256Hex, safeEqual, sha256SignatureDigest } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { acceptRawBodies, parseJson, rawBodyFrom } from '../http/raw-body.js';
import { Envelope } from '../http/schemas.js';

const DIGEST = /^[0-9a-f]{64}$/;
/** The largest id a `users` row can have (an `integer` column). */
const MAX_USER_ID = 2_147_483_647;

/**
 * The accounts webhook's signature rule (docs/auth.md): optional `sha256=`, 64 lowercase hex
 * (an uppercase digest is refused, unlike the channels'), constant-time compare, over the
 * body's exact bytes.
 */
export function accountsSignatureValid(secret: string, rawBody: Buffer | string, header: string | undefined): boolean {
  const digest = sha256SignatureDigest(header, 'optional');
  return digest !== undefined && DIGEST.test(digest) && safeEqual(digest, hmacSha256Hex(secret, rawBody));
}

const Outcome = Type.Object(
  {
    received: Type.Literal(true),
    acted: Type.Boolean({ description: 'false for other event types, unknown users and unreadable bodies, which are dropped' }),
    sessionsEnded: Type.Optional(Type.Integer()),
    tokensEnded: Type.Optional(Type.Integer()),
  },
  { title: 'AccountsWebhookOutcome' },
);

/**
 * `POST /v1/accounts/webhook`: the accounts system tells the service that a user's sessions
 * must end. Body: `{ "type": "session.revoked", "data": { "userId": 7, "sessionId"?: "<jti>" } }`.
 * Other event types, unknown users and (without a secret) unparseable bodies are accepted and
 * dropped.
 */
export const accountsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  acceptRawBodies(app);

  app.post(
    '/webhook',
    {
      schema: {
        summary: "Accounts webhook: end a user's sessions",
        description:
          'Signed with `x-webhook-signature` (HMAC-SHA256 of the raw body) when INBOX_ACCOUNTS_WEBHOOK_SECRET is set. Only `session.revoked` is acted on. The body is read as raw bytes and never schema-validated before its signature.',
        response: { 200: Envelope(Outcome) },
      },
    },
    async (request) => {
      const body = rawBodyFrom(request);
      const secret = deps.config.accountsWebhookSecret;
      // Unsigned bodies are a development convenience (docs/auth.md, "The accounts webhook"). In production a
      // missing secret must not let anyone on the network end any user's sessions.
      if (secret === undefined && deps.config.production) {
        throw errors.unauthorized('the accounts webhook is disabled: INBOX_ACCOUNTS_WEBHOOK_SECRET is not configured');
      }
      if (secret !== undefined) {
        const header = request.headers['x-webhook-signature'];
        if (!accountsSignatureValid(secret, body.bytes, typeof header === 'string' ? header : undefined)) {
          throw errors.unauthorized('invalid accounts webhook signature');
        }
      }
      const event = parseJson(body.text) as { type?: unknown; data?: { userId?: unknown; sessionId?: unknown } } | undefined;
      if (typeof event !== 'object' || event === null || event.type !== 'session.revoked')
        return envelope(request, { received: true as const, acted: false });
      const userId = event.data?.userId;
      const sessionId = event.data?.sessionId;
      // A user id no `users` row can hold names nobody: dropped like an unknown user, never a 500.
      if (!Number.isSafeInteger(userId) || (userId as number) < 1 || (userId as number) > MAX_USER_ID)
        return envelope(request, { received: true as const, acted: false });
      if (sessionId !== undefined && !isUuid(sessionId)) return envelope(request, { received: true as const, acted: false });
      const user = await findUser(deps.db, userId as number);
      if (!user) return envelope(request, { received: true as const, acted: false });

      // Republished on the tenant's bus for that user's sockets only (docs/auth.md, "The accounts webhook"). Without
      // a sessionId the user's personal-access tokens end too: they are sign-ins like any other.
      const ended = await deps.db
        .transaction()
        .execute((trx) =>
          endSessions(deps, trx, { id: user.id, workspaceId: user.workspace_id }, sessionId as string | undefined, 'revoked'),
        );
      return envelope(request, {
        received: true as const,
        acted: true,
        sessionsEnded: ended.sessionIds.length,
        tokensEnded: ended.patIds.length,
      });
    },
  );
};
