import { errors } from './errors.js';

/** `multipart/<anything>`, where RFC 2046 makes the boundary parameter mandatory. */
const MULTIPART = /^\s*multipart\//i;
/** A boundary parameter of 1 to 70 characters, quoted or not (RFC 2046, section 5.1.1). */
const BOUNDARY = /;\s*boundary\s*=\s*(?:"[^"]{1,70}"|[^\s;"]{1,70})\s*(?:;|$)/i;

/**
 * A request that says it is multipart but names no boundary cannot be read: 400 before any
 * route sees it (the multipart reader would otherwise throw a plain error, a 500). Undefined
 * for every other request. One check for every route, uploads and provider webhooks alike.
 */
export function missingBoundary(contentType: string | undefined) {
  if (contentType === undefined || !MULTIPART.test(contentType) || BOUNDARY.test(contentType)) return undefined;
  return errors.badRequest('malformed multipart body: its content-type names no boundary (multipart/form-data; boundary=…)');
}
