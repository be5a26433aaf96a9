import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { packageVersion } from '../version.js';
import { ErrorBody } from './schemas.js';

/** Which tag a route is listed under in the reference, by its path. */
const TAGS: [prefix: string, tag: string][] = [
  ['/api/user', 'users'],
  ['/v1/personal-access-tokens', 'users'],
  ['/v1/engage', 'engage'],
  ['/v1/operator', 'operator'],
  ['/v1/admin', 'dead letters'],
  ['/v1/api-keys', 'api keys'],
  ['/v1/accounts', 'accounts webhook'],
  ['/v1/realtime', 'realtime'],
  ['/v1/livechat', 'live chat'],
  ['/livechat', 'live chat'],
  ['/webhooks', 'provider webhooks'],
  ['/v1', 'inbox'],
  ['/', 'health'],
];

/**
 * Every route's error answers are the one error body, whatever its status: added here once
 * instead of in each route, so the reference lists them and they are serialised from it too.
 */
function withErrorResponses(route: RouteOptions): void {
  route.schema ??= {};
  const schema = route.schema;
  if (schema.hide) return;
  const response = (schema.response ?? {}) as Record<string, unknown>;
  schema.response = { ...response, '4xx': response['4xx'] ?? { $ref: 'ErrorBody#' }, '5xx': response['5xx'] ?? { $ref: 'ErrorBody#' } };
  schema.tags ??= [TAGS.find(([prefix]) => route.url.startsWith(prefix))![1]];
}

/**
 * The CSP of the reference page: swagger-ui's own policy (`staticCSP: true`) with two changes.
 * Its logo is an inline SVG carrying a <style> element, which the browser blocks (logging an
 * error) unless style-src names that stylesheet's hash: only it is allowed, no other inline
 * style (test/http/docs-page.test.ts checks the hash against the installed swagger-ui). And
 * no upgrade-insecure-requests, which would ask for the page's own files over https on a
 * deployment served over plain http (a LAN address) and leave the page blank.
 */
export const DOCS_CSP: Record<string, string> = {
  'default-src': "'self'",
  'base-uri': "'self'",
  'font-src': "'self' https: data:",
  'frame-ancestors': "'self'",
  'img-src': "'self' data: validator.swagger.io",
  'object-src': "'none'",
  'script-src': "'self'",
  'script-src-attr': "'none'",
  'style-src': "'self' https: 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
};

/**
 * The OpenAPI 3.1 document, generated from the routes' own schemas: `GET /openapi.json`, and a
 * reference page at `GET /docs`. Registered before the routes so that it sees them all.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema({ $id: 'ErrorBody', ...ErrorBody });
  app.addHook('onRoute', withErrorResponses);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'inbox',
        version: packageVersion(),
        description:
          'A self-hosted, multi-channel messaging backend. `/v1` answers `{ data, meta }`; every error is `{ error: { code, message }, meta: { requestId } }`. Provider webhooks live under `/webhooks` and are authenticated by their signatures.',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'a session token from /api/user/login (or, where allowed, a personal-access token)',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'a workspace API key' },
          adminKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-service-admin-api-key',
            description: 'the engage admin key (INBOX_ADMIN_API_KEY)',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, staticCSP: DOCS_CSP });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
