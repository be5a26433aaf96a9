import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { changesOf, recordAudit, trailOf } from '../audit/audit.js';
import { randomToken, sha256Hex } from '../crypto/hmac.js';
import type { PersonalAccessTokensTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope, Nullable, Timestamp } from '../http/schemas.js';
import { PAT_PREFIX, requireAuth, userOf } from './auth.js';
import { insertPat, listPats } from './sessions.queries.js';
import { deletePat } from './sessions.service.js';

export const PatResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({ description: 'the first characters of the token, to recognise it' }),
    createdAt: Timestamp,
    expiresAt: Timestamp,
    lastUsedAt: Nullable(Timestamp),
  },
  { title: 'PersonalAccessToken' },
);
/** A token as created: the plain `token`, shown in this answer only. */
export const IssuedPat = Type.Object({ ...PatResource.properties, token: Type.String() }, { title: 'IssuedPersonalAccessToken' });

function patResource(row: Selectable<PersonalAccessTokensTable>): Static<typeof PatResource> {
  return {
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** A token lives 90 days unless its creator asks for 1 to 365. */
export const PAT_DEFAULT_DAYS = 90;
export const PAT_MAX_DAYS = 365;

export const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  expiresInDays: Type.Optional(Type.Integer({ minimum: 1, maximum: PAT_MAX_DAYS })),
});

/** `/v1/personal-access-tokens`: a signed-in user's tokens for the socket and `GET /api/user/user`. */
export const personalAccessTokensRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { kinds: ['user'] }));

  app.get(
    '/',
    { schema: { summary: 'List your personal-access tokens', querystring: CursorQuery, response: { 200: CursorPage(PatResource) } } },
    async (request) => {
      const page = await listPats(deps.db, userOf(request).userId, parseCursorQuery(request.query));
      return envelope(request, page.items.map(patResource), page.meta);
    },
  );

  app.post(
    '/',
    {
      schema: {
        summary: 'Create a personal-access token',
        description: 'Answers the plain token once; it expires after `expiresInDays` (default 90, at most 365).',
        body: CreateBody,
        response: { 201: Envelope(IssuedPat) },
      },
    },
    async (request, reply) => {
      const token = randomToken(PAT_PREFIX, 24);
      const now = deps.now();
      const expiresAt = new Date(now.getTime() + (request.body.expiresInDays ?? PAT_DEFAULT_DAYS) * 86_400_000);
      const row = await deps.db.transaction().execute(async (trx) => {
        const pat = await insertPat(trx, {
          userId: userOf(request).userId,
          name: request.body.name,
          tokenHash: sha256Hex(token),
          tokenPrefix: token.slice(0, 15),
          createdAt: now,
          expiresAt,
        });
        const shown = changesOf(null, { name: pat.name, expiresAt: expiresAt.toISOString(), token: true }, ['token']);
        await recordAudit(trx, trailOf(request), 'personal_access_token.created', { type: 'personal_access_token', id: pat.id }, shown);
        return pat;
      });
      reply.code(201);
      return envelope(request, { ...patResource(row), token });
    },
  );

  app.delete(
    '/:id',
    {
      schema: {
        summary: 'Revoke a personal-access token',
        params: Type.Object({ id: Type.With(BigId, { description: 'the personal-access token id' }) }),
        response: { 200: Envelope(Deleted) },
      },
    },
    async (request) => {
      const auth = userOf(request);
      if (!(await deletePat(deps, { id: auth.userId, workspaceId: auth.workspaceId }, request.params.id, trailOf(request))))
        throw errors.notFound('personal-access token');
      return deleted(request, request.params.id);
    },
  );
};
