import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * A request body as it arrived. Signatures are over `bytes`, exactly as sent: a body that
 * is not valid UTF-8 decodes to U+FFFD in `text`, and an HMAC over that text would never
 * match. `text` (the UTF-8 decoding) is what parsers read and what is stored.
 */
export interface RawBody {
  text: string;
  bytes: Buffer;
}

/** A RawBody from the bytes received, or from a string sent as UTF-8. */
export function rawBodyOf(body: Buffer | string): RawBody {
  return typeof body === 'string' ? { text: body, bytes: Buffer.from(body, 'utf8') } : { text: body.toString('utf8'), bytes: body };
}

/**
 * For the routes of one plugin that verify signatures (provider webhooks, the accounts
 * webhook): every content type arrives unparsed, as the exact bytes sent. Nothing is parsed
 * before its signature is checked.
 */
export function acceptRawBodies(app: FastifyInstance): void {
  // A content type Fastify cannot read (empty, `json`, `undefined`, `application/json,
  // text/plain`) would be refused with 415 before any parser, so before the signature:
  // without it the body arrives as bytes like any other and its signature decides.
  app.addHook('onRequest', (request, _reply, done) => {
    const type = request.headers['content-type'];
    if (type !== undefined && !MEDIA_TYPE.test(type)) delete request.headers['content-type'];
    done();
  });
  app.removeAllContentTypeParsers();
  const asBytes = (_request: FastifyRequest, body: Buffer, done: (err: null, body: Buffer) => void) => done(null, body);
  // The same parser by name for the types providers post most: Fastify remembers a named
  // type's parser by header, while every request that reaches the catch-all parses its
  // content-type header anew.
  app.addContentTypeParser(COMMON_TYPES, { parseAs: 'buffer' }, asBytes);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, asBytes);
}

const COMMON_TYPES = ['application/json', 'application/x-www-form-urlencoded'];

/** `type/subtype` made of RFC 9110 tokens, then parameters or nothing: what Fastify reads as a media type. */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(?:;|$)/;

/** The raw body of a request on a route that `acceptRawBodies`; empty when none was sent. */
export function rawBodyFrom(request: FastifyRequest): RawBody {
  return rawBodyOf(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
}

/** JSON.parse that answers undefined for text that is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
