import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Selectable } from 'kysely';
import { randomToken, sha256Hex } from '../crypto/hmac.js';
import type { PersonalAccessTokensTable } from '../db/types.js';
import { BigId } from '../http/ids.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { cursorPage, CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { PAT_PREFIX, requireAuth } from './auth.js';
import { insertPat, listPats, revokePat } from './sessions.queries.js';

function patResource(row: Selectable<PersonalAccessTokensTable>) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** `/v1/personal-access-tokens`: a signed-in user's tokens for the socket and `GET /api/user/user`. */
export const personalAccessTokenRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preHandler', requireAuth(deps, { kinds: ['user'] }));

  app.get('/', { schema: { querystring: CursorQuery } }, async (request) => {
    const { limit, cursor } = parseCursorQuery(request.query);
    const rows = await listPats(deps.db, request.auth!.userId!, limit, cursor);
    const page = cursorPage(rows, limit, (r) => ({ at: r.created_at, id: r.id }));
    return envelope(request, page.items.map(patResource), page.meta);
  });

  app.post('/', { schema: { body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }) } }, async (request, reply) => {
    const token = randomToken(PAT_PREFIX, 24);
    const row = await insertPat(deps.db, { userId: request.auth!.userId!, name: request.body.name, tokenHash: sha256Hex(token), tokenPrefix: token.slice(0, 15) });
    reply.code(201);
    return envelope(request, { ...patResource(row), token });
  });

  app.delete('/:id', { schema: { params: Type.Object({ id: BigId }) } }, async (request, reply) => {
    if (!(await revokePat(deps.db, request.auth!.userId!, request.params.id, deps.now()))) throw errors.notFound('personal-access token');
    reply.code(204);
  });
};
