import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, NoContent, StringEnum } from '../http/schemas.js';
import { listApiKeys, replaceApiKeySecret, revokeApiKey } from './api-keys.queries.js';
import { API_KEY_SCOPES, ApiKeyResource, apiKeyResource, IssuedApiKey, issueApiKey, newApiKeySecret } from './api-keys.service.js';

const KeyParams = Type.Object({ id: Type.With(BigId, { description: 'the API key id' }) });

/** API keys of the caller's workspace (JWT admin or an `admin`-scoped key). */
export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/',
    { schema: { summary: 'List API keys', querystring: CursorQuery, response: { 200: CursorPage(ApiKeyResource) } } },
    async (request) => {
      const page = await listApiKeys(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
      return envelope(request, page.items.map(apiKeyResource), page.meta);
    },
  );

  app.post(
    '/',
    {
      schema: {
        summary: 'Create an API key',
        description: 'Answers the plain `key` once; it is stored hashed.',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          scopes: Type.Optional(Type.Array(StringEnum(API_KEY_SCOPES), { maxItems: 10 })),
        }),
        response: { 201: Envelope(IssuedApiKey) },
      },
    },
    async (request, reply) => {
      const { workspaceId } = tenantOf(request);
      reply.code(201);
      return envelope(request, await issueApiKey(deps.db, workspaceId, request.body.name, request.body.scopes ?? []));
    },
  );

  app.post(
    '/:id/rotate',
    {
      schema: {
        summary: 'Rotate an API key',
        description: 'A new secret for the key, answered once; the old one stops working at once.',
        params: KeyParams,
        response: { 200: Envelope(IssuedApiKey) },
      },
    },
    async (request) => {
      const { workspaceId } = tenantOf(request);
      const secret = newApiKeySecret();
      const row = await replaceApiKeySecret(deps.db, workspaceId, request.params.id, secret.keyHash, secret.keyPrefix);
      if (!row) throw errors.notFound('api key');
      return envelope(request, { ...apiKeyResource(row), key: secret.key });
    },
  );

  app.delete(
    '/:id',
    { schema: { summary: 'Revoke an API key', params: KeyParams, response: { 204: NoContent } } },
    async (request, reply) => {
      const { workspaceId } = tenantOf(request);
      if (!(await revokeApiKey(deps.db, workspaceId, request.params.id, deps.now()))) throw errors.notFound('api key');
      reply.code(204);
    },
  );
};
