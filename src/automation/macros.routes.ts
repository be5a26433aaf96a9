import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { deleted, envelope } from '../http/envelope.js';
import { BigId, IntId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Deleted, Envelope } from '../http/schemas.js';
import { ThreadResource } from '../threads/threads.resources.js';
import { listMacros } from './macros.queries.js';
import { MacroCreate, MacroPatch, MacroResource, macroResource } from './macros.resources.js';
import { changeMacro, createMacro, removeMacro, runMacro } from './macros.service.js';

const Params = Type.Object({ id: Type.With(IntId, { description: 'the macro id' }) });
const RunParams = Type.Object({
  id: Type.With(BigId, { description: 'the thread id' }),
  macroId: Type.With(IntId, { description: 'the macro id' }),
});
const userOf = (auth: ReturnType<typeof tenantOf>) => (auth.kind === 'api_key' ? null : auth.userId);

/** Macros (docs/automation.md): any agent keeps them; `shared: false` ones only their author sees. */
export const macrosRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/macros',
    {
      schema: {
        summary: 'List the macros the caller sees, newest first (cursor pages)',
        querystring: CursorQuery,
        response: { 200: CursorPage(MacroResource) },
      },
    },
    async (request) => {
      const auth = tenantOf(request);
      const page = await listMacros(deps.db, auth.workspaceId, userOf(auth), parseCursorQuery(request.query));
      return envelope(request, page.items.map(macroResource), page.meta);
    },
  );

  app.post(
    '/macros',
    { schema: { summary: 'Create a macro', body: MacroCreate, response: { 201: Envelope(MacroResource) } } },
    async (request, reply) => {
      const created = await createMacro(deps, tenantOf(request), trailOf(request), request.body);
      reply.code(201);
      return envelope(request, created);
    },
  );

  app.patch(
    '/macros/:id',
    {
      schema: {
        summary: 'Change a macro (its author or an admin)',
        params: Params,
        body: MacroPatch,
        response: { 200: Envelope(MacroResource) },
      },
    },
    async (request) => envelope(request, await changeMacro(deps, tenantOf(request), trailOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/macros/:id',
    { schema: { summary: 'Delete a macro (its author or an admin)', params: Params, response: { 200: Envelope(Deleted) } } },
    async (request) => {
      await removeMacro(deps, tenantOf(request), trailOf(request), request.params.id);
      return deleted(request, request.params.id);
    },
  );

  app.post(
    '/threads/:id/macros/:macroId/run',
    {
      schema: {
        summary: 'Run a macro on a thread: its actions in order, in one transaction',
        params: RunParams,
        response: { 200: Envelope(ThreadResource) },
      },
    },
    async (request) => envelope(request, await runMacro(deps, tenantOf(request), request.params.id, request.params.macroId)),
  );
};
