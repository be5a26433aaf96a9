import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Selectable } from 'kysely';
import { Type } from 'typebox';
import { trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { ExportsTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { Envelope, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { requestExport } from './exports.js';
import { findExport } from './exports.queries.js';

const ExportAccepted = Type.Object({ id: Type.String({ format: 'uuid' }) }, { title: 'ExportAccepted' });

export const ExportResource = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: StringEnum(['pending', 'ready', 'failed'] as const),
    url: Nullable(Type.String({ description: 'the zip, once `ready`: GET it with an admin credential' })),
    contactId: Nullable(Type.Integer({ description: 'null: the whole workspace' })),
    size: Nullable(Type.Integer({ description: "the zip's bytes, once ready" })),
    error: Nullable(Type.String()),
    createdAt: Timestamp,
    expiresAt: Timestamp,
  },
  { title: 'Export' },
);

const ExportParams = Type.Object({ id: Type.String({ maxLength: 36, description: 'the export id' }) });

function exportResource(row: Selectable<ExportsTable>, publicUrl: string) {
  return {
    id: row.id,
    status: row.status,
    url: row.status === 'ready' ? `${publicUrl}/v1/exports/${row.id}/content` : null,
    contactId: row.contact_id === null ? null : Number(row.contact_id),
    size: row.size === null ? null : Number(row.size),
    error: row.error,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
  };
}

/** Exports of a contact or a whole workspace (docs/privacy.md, "Export"): admins only. */
export const exportsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  const found = async (workspaceId: number, id: string) => {
    const row = isUuid(id) ? await findExport(deps.db, workspaceId, id) : undefined;
    if (!row || row.expires_at.getTime() <= deps.now().getTime()) throw errors.notFound('export');
    return row;
  };

  app.post(
    '/contacts/:id/export',
    {
      schema: {
        summary: 'Export a contact as a zip',
        description: 'A job writes the zip; poll `GET /v1/exports/:id`. Deleted 24 h after.',
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'the contact id' }) }),
        response: { 202: Envelope(ExportAccepted) },
      },
    },
    async (request, reply) => {
      const id = await requestExport(deps, tenantOf(request).workspaceId, request.params.id, trailOf(request));
      reply.code(202);
      return envelope(request, { id });
    },
  );

  app.post(
    '/workspace/export',
    {
      schema: {
        summary: 'Export the whole workspace as a zip',
        description: 'Contacts, threads, messages, notes and files; a job writes the zip; poll `GET /v1/exports/:id`. Deleted 24 h after.',
        response: { 202: Envelope(ExportAccepted) },
      },
    },
    async (request, reply) => {
      const id = await requestExport(deps, tenantOf(request).workspaceId, null, trailOf(request));
      reply.code(202);
      return envelope(request, { id });
    },
  );

  app.get(
    '/exports/:id',
    { schema: { summary: 'Get an export', params: ExportParams, response: { 200: Envelope(ExportResource) } } },
    async (request) =>
      envelope(request, exportResource(await found(tenantOf(request).workspaceId, request.params.id), deps.config.publicUrl)),
  );

  app.get(
    '/exports/:id/content',
    {
      schema: {
        summary: "Download an export's zip",
        description: 'Streamed as `application/zip`; not ready yet (or failed) → 409.',
        params: ExportParams,
        response: {
          200: {
            description: 'the zip',
            content: { 'application/zip': { schema: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const row = await found(tenantOf(request).workspaceId, request.params.id);
      if (row.status !== 'ready' || !row.storage_key) throw errors.exportNotReady(row.status);
      const body = await deps.storage.get(row.storage_key);
      if (!body) throw errors.notFound('export');
      reply.headers({
        'content-type': 'application/zip',
        'content-disposition': `attachment; filename="export-${row.id}.zip"`,
        'x-content-type-options': 'nosniff',
      });
      return reply.send(body);
    },
  );
};
