import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope } from '../http/schemas.js';
import { deleteCannedResponse, listCannedResponses } from './canned-responses.queries.js';
import {
  CannedResponseResource,
  cannedResponseResource,
  changeCannedResponse,
  createCannedResponse,
  SHORT_CODE_PATTERN,
} from './canned-responses.service.js';

const Params = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the canned response id' }) });
const ShortCode = Type.String({ pattern: SHORT_CODE_PATTERN, description: '1–40 of a-z 0-9 - _, unique in the workspace' });
const Content = Type.String({ minLength: 1, maxLength: 4096, description: 'the text it stands for, 1–4096 characters' });

export const CannedResponseCreate = Type.Object({ shortCode: ShortCode, content: Content }, { additionalProperties: false });
export const CannedResponsePatch = Type.Object(
  { shortCode: Type.Optional(ShortCode), content: Type.Optional(Content) },
  { additionalProperties: false },
);

/**
 * `/v1/canned-responses`: saved replies agents insert by short code. Any workspace user or
 * `write` key manages them; a `read` key may list them.
 */
export const cannedResponsesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/',
    { schema: { summary: 'List canned responses', querystring: CursorQuery, response: { 200: CursorPage(CannedResponseResource) } } },
    async (request) => {
      const page = await listCannedResponses(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
      return envelope(request, page.items.map(cannedResponseResource), page.meta);
    },
  );

  app.post(
    '/',
    {
      schema: {
        summary: 'Create a canned response',
        body: CannedResponseCreate,
        response: { 201: Envelope(CannedResponseResource) },
      },
    },
    async (request, reply) => {
      const created = await createCannedResponse(deps, tenantOf(request).workspaceId, request.body);
      reply.code(201);
      return envelope(request, created);
    },
  );

  app.patch(
    '/:id',
    {
      schema: {
        summary: 'Change a canned response',
        params: Params,
        body: CannedResponsePatch,
        response: { 200: Envelope(CannedResponseResource) },
      },
    },
    async (request) => envelope(request, await changeCannedResponse(deps, tenantOf(request).workspaceId, request.params.id, request.body)),
  );

  app.delete(
    '/:id',
    { schema: { summary: 'Delete a canned response', params: Params, response: { 200: Envelope(Deleted) } } },
    async (request) => {
      if (!(await deleteCannedResponse(deps.db, tenantOf(request).workspaceId, request.params.id)))
        throw errors.notFound('canned response');
      return deleted(request, request.params.id);
    },
  );
};
