import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { changesOf, recordAudit, trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope, StringEnum } from '../http/schemas.js';
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
      const issued = await deps.db.transaction().execute(async (trx) => {
        const key = await issueApiKey(trx, workspaceId, request.body.name, request.body.scopes ?? []);
        const shown = changesOf(null, { name: key.name, scopes: key.scopes, key: true }, ['key']);
        await recordAudit(trx, trailOf(request), 'api_key.created', { type: 'api_key', id: key.id }, shown);
        return key;
      });
      reply.code(201);
      return envelope(request, issued);
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
      const row = await deps.db.transaction().execute(async (trx) => {
        const rotated = await replaceApiKeySecret(trx, workspaceId, request.params.id, secret.keyHash, secret.keyPrefix);
        if (!rotated) throw errors.notFound('api key');
        const shown = changesOf({ key: true }, { key: true }, ['key']);
        await recordAudit(trx, trailOf(request), 'api_key.rotated', { type: 'api_key', id: rotated.id }, shown);
        return rotated;
      });
      return envelope(request, { ...apiKeyResource(row), key: secret.key });
    },
  );

  app.delete(
    '/:id',
    { schema: { summary: 'Revoke an API key', params: KeyParams, response: { 200: Envelope(Deleted) } } },
    async (request) => {
      const { workspaceId } = tenantOf(request);
      await deps.db.transaction().execute(async (trx) => {
        if (!(await revokeApiKey(trx, workspaceId, request.params.id, deps.now()))) throw errors.notFound('api key');
        await recordAudit(trx, trailOf(request), 'api_key.revoked', { type: 'api_key', id: request.params.id });
      });
      return deleted(request, request.params.id);
    },
  );
};
