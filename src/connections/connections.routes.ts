import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { isAdmin, requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope } from '../http/schemas.js';
import { checkConnection } from './connection-check.js';
import { findConnection, listConnections } from './connections.queries.js';
import {
  ConnectionCreateBody,
  ConnectionPatch,
  ConnectionResource,
  changeConnection,
  connectionResource,
  createConnection,
  deleteConnection,
} from './connections.service.js';

/**
 * `GET /v1/connections`: the caller's channel accounts, cursor pages, and `GET …/:id` one of
 * them; `POST` and `PATCH …/:id` (workspace admins).
 */
export const connectionsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/',
    {
      preValidation: requireAuth(deps),
      schema: { summary: 'List connections', querystring: CursorQuery, response: { 200: CursorPage(ConnectionResource) } },
    },
    async (request) => {
      const auth = tenantOf(request);
      const page = await listConnections(deps.db, auth.workspaceId, parseCursorQuery(request.query));
      const view = { publicUrl: deps.config.publicUrl, admin: isAdmin(auth) };
      return envelope(
        request,
        page.items.map((r) => connectionResource(r, view)),
        page.meta,
      );
    },
  );

  app.get(
    '/:id',
    {
      preValidation: requireAuth(deps),
      schema: {
        summary: 'Get a connection',
        description: "One connection of the caller's workspace, as the list shows it; a deleted one is 404.",
        params: Type.Object({ id: Type.With(BigId, { description: 'the connection id' }) }),
        response: { 200: Envelope(ConnectionResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const row = await findConnection(deps.db, auth.workspaceId, request.params.id);
      if (!row) throw errors.notFound('connection');
      return envelope(request, connectionResource(row, { publicUrl: deps.config.publicUrl, admin: isAdmin(auth) }));
    },
  );

  // The engage route's body and rules, for the workspace's own admins (the console's settings).
  app.post(
    '/',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Connect a channel account',
        description:
          'Connects a channel account to the caller\'s workspace, as the engage route does for the platform operator. Credentials are write-only. The connection is `managedBy: "workspace"`: it sends only with its own credentials, never the deployment\'s INBOX_INTEGRATIONS ones (a send without them fails: "connection has no credentials"). A deployment with INBOX_TENANT_CONNECTIONS=false answers 403: the operator connects accounts there.',
        body: ConnectionCreateBody,
        response: { 201: Envelope(ConnectionResource) },
      },
    },
    async (request, reply) => {
      // Deliveries find their connection by account id across the deployment: where several
      // organisations share one, the operator may keep connecting accounts to itself, so that
      // no workspace claims an account meant for another.
      if (!deps.config.tenantConnections)
        throw errors.forbidden('on this deployment the operator connects accounts (INBOX_TENANT_CONNECTIONS=false)');
      const connection = await createConnection(deps, tenantOf(request).workspaceId, request.body, 'workspace', trailOf(request));
      reply.code(201);
      return envelope(request, connection);
    },
  );

  // Credentials let their holder speak as the workspace on a provider: workspace admins only
  // (a JWT admin or an `admin` API key), checked before the body is looked at.
  app.patch(
    '/:id',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Update a connection',
        description:
          'Renames the connection or sets (replacing) or clears (`null`) its provider credentials, which are write-only and stored encrypted.',
        params: Type.Object({ id: Type.With(BigId, { description: 'the connection id' }) }),
        body: ConnectionPatch,
        response: { 200: Envelope(ConnectionResource) },
      },
    },
    async (request) =>
      envelope(request, await changeConnection(deps, tenantOf(request).workspaceId, request.params.id, request.body, trailOf(request))),
  );

  app.post(
    '/:id/check',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Check a connection against its provider',
        description:
          "Calls the provider's cheapest authenticated read with the credentials a reply would use (Graph's phone number or page, Twilio's account, Telegram's getMe, WAHA's session, an SMTP login) and answers whether it worked, in words. Nothing is stored.",
        params: Type.Object({ id: Type.With(BigId, { description: 'the connection id' }) }),
        response: {
          200: Envelope(
            Type.Object(
              { ok: Type.Boolean(), message: Type.String({ description: 'what the provider answered, or what is missing' }) },
              { title: 'ConnectionCheck' },
            ),
          ),
        },
      },
    },
    async (request) => envelope(request, await checkConnection(deps, tenantOf(request).workspaceId, request.params.id)),
  );

  app.delete(
    '/:id',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Delete a connection',
        description:
          'Stops its deliveries (its webhook URL answers 404). Its threads stay, read-only: replies to them answer 409. The account may be connected again.',
        params: Type.Object({ id: Type.With(BigId, { description: 'the connection id' }) }),
        response: { 200: Envelope(Deleted) },
      },
    },
    async (request) => {
      if (!(await deleteConnection(deps, tenantOf(request).workspaceId, request.params.id, trailOf(request))))
        throw errors.notFound('connection');
      return deleted(request, request.params.id);
    },
  );
};
