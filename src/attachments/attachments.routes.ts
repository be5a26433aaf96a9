import type { Readable } from 'node:stream';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { Envelope } from '../http/schemas.js';
import { type AttachmentView, findAttachment, findAttachmentById } from './attachments.queries.js';
import { AttachmentResource, attachmentResource, contentUrl } from './attachments.resources.js';
import { contentHeaders } from './content-headers.js';
import { multipartOptions, readUpload } from './multipart-upload.js';
import { linkIsValid, linkKey } from './signed-links.js';
import { storeUpload } from './upload.service.js';

const AttachmentParams = Type.Object({ id: Type.With(BigId, { description: 'the attachment id' }) });
const NamedParams = Type.Object({
  id: Type.With(BigId, { description: 'the attachment id' }),
  name: Type.String({ maxLength: 1024, description: "the file's name, ignored: only the id says which file" }),
});
const ContentQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20, description: 'signed links only: when the link ends, unix seconds' })),
  signature: Type.Optional(Type.String({ maxLength: 128, description: 'signed links only: the hex HMAC of the id and expires' })),
});

/**
 * The Attachment resource (docs/attachments.md): uploads, the resource itself (to poll one
 * still `pending`), and its bytes. The bytes answer a tenant's credential (`read` scope or a
 * user) or a signed link (live chat visitors, providers that fetch media by URL).
 */
export const attachmentsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  await app.register(fastifyMultipart, multipartOptions(deps.config.maxAttachmentBytes));
  const tenant = requireAuth(deps);
  const url = contentUrl(deps.config.publicUrl);

  app.post(
    '/attachments',
    {
      preValidation: tenant,
      schema: {
        summary: 'Upload a file to send with a reply',
        description:
          'multipart/form-data with the file in the field `file` (`write` scope). Streamed to storage; the type is read from the bytes. ' +
          'Over INBOX_MAX_ATTACHMENT_BYTES → 413 and nothing is kept. An upload no message uses within 24 h is deleted.',
        consumes: ['multipart/form-data'],
        response: { 201: Envelope(AttachmentResource) },
      },
    },
    async (request, reply) => {
      const part = await readUpload(request);
      const row = await storeUpload(deps, {
        workspaceId: tenantOf(request).workspaceId,
        visitorId: null,
        maxBytes: deps.config.maxAttachmentBytes,
        ...part,
      });
      reply.code(201);
      return envelope(request, attachmentResource(row, url));
    },
  );

  app.get(
    '/attachments/:id',
    {
      preValidation: tenant,
      schema: {
        summary: 'Get an attachment',
        description: 'Its status, type and size; poll it while `pending`. Another workspace’s → 404.',
        params: AttachmentParams,
        response: { 200: Envelope(AttachmentResource) },
      },
    },
    async (request) => {
      const row = await findAttachment(deps.db, tenantOf(request), request.params.id);
      if (!row) throw errors.notFound('attachment');
      return envelope(request, attachmentResource(row, url));
    },
  );

  const contentSchema = {
    summary: "Download an attachment's bytes",
    description:
      'Streamed with `x-content-type-options: nosniff` and `content-security-policy: sandbox`. Raster images (PNG, JPEG, GIF, ' +
      'WebP), audio and video keep their type and show inline; PDF, plain text, CSV, ZIP and Office documents keep their type ' +
      'as a download (`content-disposition: attachment`); anything else (HTML, SVG, XML, scripts, unknown) is an ' +
      '`application/octet-stream` download. A signed link (`?expires=&signature=`, ' +
      '15 minutes) needs no credential; a wrong or expired one → 401. Not stored yet (`pending`) or `failed` → 409.',
    querystring: ContentQuery,
    response: {
      200: { description: 'the bytes', content: { '*/*': { schema: Type.Unsafe<Readable>({ type: 'string', format: 'binary' }) } } },
    },
  };
  // A signed link is its own credential; without one, a tenant's is required.
  const linkOrTenant = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!hasLinkParams(request)) await tenant(request, reply);
  };
  const content = async (request: FastifyRequest, reply: FastifyReply, id: number, query: Static<typeof ContentQuery>) => {
    let row: AttachmentView | undefined;
    if (hasLinkParams(request)) {
      const { expires, signature } = query;
      const at = /^\d{1,15}$/.test(expires ?? '') ? Number(expires) : Number.NaN;
      if (!linkIsValid(linkKey(deps.secretKey), id, at, signature ?? '', deps.now()))
        throw errors.unauthorized('this link is wrong or has expired');
      row = await findAttachmentById(deps.db, id);
    } else {
      row = await findAttachment(deps.db, tenantOf(request), id);
    }
    if (!row) throw errors.notFound('attachment');
    if (row.status !== 'stored' || !row.storage_key) throw errors.attachmentNotStored(row.status);
    const body = await deps.storage.get(row.storage_key);
    if (!body) throw errors.notFound('attachment content');
    reply.headers(contentHeaders(row));
    return reply.send(body);
  };

  app.get(
    '/attachments/:id/content',
    { preValidation: linkOrTenant, schema: { ...contentSchema, params: AttachmentParams } },
    (request, reply) => content(request, reply, request.params.id, request.query),
  );

  // The same bytes under a name: the signed links given to providers that fetch media by URL end
  // in the file's name, which they name the file after (docs/attachments.md, "Signed links"). The
  // name is never read: the id (and the signature) alone say what is served, with the same headers.
  app.get(
    '/attachments/:id/content/:name',
    {
      preValidation: linkOrTenant,
      schema: {
        ...contentSchema,
        summary: "Download an attachment's bytes, the link ending in its name",
        description: `${contentSchema.description} The last segment, the file's name, is ignored.`,
        params: NamedParams,
      },
    },
    (request, reply) => content(request, reply, request.params.id, request.query),
  );
};

function hasLinkParams(request: FastifyRequest): boolean {
  const query = request.query as { expires?: unknown; signature?: unknown };
  return query.expires !== undefined || query.signature !== undefined;
}
