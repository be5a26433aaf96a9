import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { errors } from '../http/errors.js';
import { cleanFilename } from './content-type.js';

/** The multipart field an upload's file travels in. */
export const UPLOAD_FIELD = 'file';

/**
 * @fastify/multipart's options for an upload route. The reader lets one byte more than the
 * limit through: storage then sees the file is too large and stops (TooLargeError → 413),
 * rather than the reader cutting the file short and storing the cut as if it were whole.
 */
export function multipartOptions(maxBytes: number) {
  return { limits: { files: 1, fileSize: maxBytes + 1, fields: 10, parts: 20 } };
}

/**
 * The file of an upload request, still streaming: what the upload routes (tenants' and live
 * chat visitors') hand to storeUpload. A request that is not multipart → 415; one without a
 * file in the field `file` → 422. The stream's size limit is the multipart plugin's
 * (registered with INBOX_MAX_ATTACHMENT_BYTES), so the read stops there.
 */
export async function readUpload(request: FastifyRequest) {
  if (!request.isMultipart()) throw errors.unsupportedMediaType(request.headers['content-type'], ['multipart/form-data']);
  let part: Awaited<ReturnType<FastifyRequest['file']>>;
  try {
    part = await request.file();
  } catch (err) {
    throw multipartError(err);
  }
  if (!part || part.fieldname !== UPLOAD_FIELD) throw errors.validation(`body must have a file in the multipart field "${UPLOAD_FIELD}"`);
  return { body: part.file, declaredType: part.mimetype, filename: cleanFilename(part.filename) };
}

/**
 * A malformed multipart body is the client's fault: 400, never a 500. Reading the first part
 * reads nothing but the request, so the multipart reader's plain errors (a body with no
 * delimiter line: "Unexpected end of multipart data") are the body's too.
 */
function multipartError(err: unknown) {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 500) return err;
  if (err instanceof Error) return errors.badRequest(`malformed multipart body: ${err.message}`);
  return err;
}
