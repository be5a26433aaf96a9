import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { API_KEY_SCOPES, IssuedApiKey } from '../api-keys/api-keys.service.js';
import { trailOf } from '../audit/audit.js';
import { requireAdminKey } from '../auth/auth.js';
import { ConnectionCreateBody, ConnectionResource, createConnection } from '../connections/connections.service.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { IntId } from '../http/ids.js';
import { Envelope, StringEnum } from '../http/schemas.js';
import { USER_ROLES, UserResource } from '../users/users.resources.js';
import { routeToNewUser } from '../users/users.service.js';
import { provisionApiKey, provisionUser, provisionWorkspace } from './provision.js';
import { requireWorkspace, WorkspaceResource } from './workspaces.service.js';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const WorkspaceParams = Type.Object({ id: Type.With(IntId, { description: 'the workspace id' }) });

/** Engage admin routes (docs/api.md): the platform operator provisions tenants. */
export const engageRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAdminKey(deps));

  app.post(
    '/workspaces',
    { schema: { summary: 'Create a workspace', body: Type.Object({ name: Name }), response: { 201: Envelope(WorkspaceResource) } } },
    async (request, reply) => {
      reply.code(201);
      const workspace = await provisionWorkspace(deps.db, (id) => trailOf(request, id), request.body.name);
      return envelope(request, workspace);
    },
  );

  app.post(
    '/workspaces/:id/users',
    {
      schema: {
        summary: 'Add a user to a workspace',
        params: WorkspaceParams,
        body: Type.Object({
          name: Name,
          email: Type.String({ format: 'email', maxLength: 320 }),
          password: Type.String({ minLength: 8, maxLength: 1024 }),
          roles: Type.Optional(Type.Array(StringEnum(USER_ROLES), { maxItems: 10 })),
        }),
        response: { 201: Envelope(UserResource) },
      },
    },
    async (request, reply) => {
      const input = { ...request.body, roles: request.body.roles ?? [] };
      const workspaceId = request.params.id;
      const user = await provisionUser(deps.db, trailOf(request, workspaceId), workspaceId, input, (trx) =>
        routeToNewUser(deps, trx, workspaceId),
      );
      reply.code(201);
      return envelope(request, user);
    },
  );

  app.post(
    '/workspaces/:id/api-keys',
    {
      schema: {
        summary: 'Issue an API key for a workspace',
        params: WorkspaceParams,
        body: Type.Object({
          name: Name,
          scopes: Type.Optional(Type.Array(StringEnum(API_KEY_SCOPES), { maxItems: 10 })),
        }),
        response: { 201: Envelope(IssuedApiKey) },
      },
    },
    async (request, reply) => {
      await requireWorkspace(deps.db, request.params.id);
      const trail = trailOf(request, request.params.id);
      const key = await provisionApiKey(deps.db, trail, request.params.id, request.body.name, request.body.scopes ?? []);
      reply.code(201);
      return envelope(request, key);
    },
  );

  app.post(
    '/workspaces/:id/connections',
    {
      schema: {
        summary: 'Connect a channel account to a workspace',
        params: WorkspaceParams,
        body: ConnectionCreateBody,
        response: { 201: Envelope(ConnectionResource) },
      },
    },
    async (request, reply) => {
      const connection = await createConnection(deps, request.params.id, request.body, 'operator', trailOf(request, request.params.id));
      reply.code(201);
      return envelope(request, connection);
    },
  );
};
