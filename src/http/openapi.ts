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
  ['/csat', 'csat'],
  ['/v1/csat-responses', 'csat'],
  ['/v1', 'inbox'],
  ['/', 'health'],
];

type Security = Record<string, string[]>[];

/**
 * Who may call what, by `METHOD /path` (first match). Each guard lives in its route module's
 * hooks, which the document cannot see; test/http/openapi.test.ts calls every operation without
 * credentials and holds this table to what the routes really do.
 */
const SECURITY: [RegExp, Security][] = [
  [/^GET \/(healthz|readyz)$/, []],
  [/^GET \/metrics$/, [{}, { metricsToken: [] }]],
  [/^(GET|POST) \/api\/user\/setup$/, []],
  [/^POST \/api\/user\/(login|generate-token|password-reset|password-reset\/confirm|invite\/accept)$/, []],
  [/^POST \/api\/user\/refresh$/, [{ bearer: [] }, { refreshCookie: [] }]],
  [/^\w+ \/api\/user\//, [{ bearer: [] }]],
  [/^\w+ \/v1\/personal-access-tokens/, [{ bearer: [] }]],
  // Signed (x-webhook-signature), not authenticated.
  [/^POST \/v1\/accounts\/webhook$/, []],
  [/^\w+ \/v1\/engage\//, [{ adminKey: [] }]],
  [/^\w+ \/v1\/operator\//, [{ adminKey: [] }, { bearer: [] }]],
  [/^OPTIONS /, []],
  [/^(POST \/v1\/livechat\/\{widgetKey\}\/conversations|GET \/v1\/livechat\/\{widgetKey\}\/config)$/, []],
  [/^\w+ \/v1\/livechat\//, [{ visitorToken: [] }]],
  [/^GET \/livechat\//, []],
  // The survey link's token is its credential (docs/reports.md, "CSAT").
  [/^\w+ \/csat\//, []],
  // Provider webhooks are judged by their signatures (SPEC §5.2).
  [/^\w+ \/webhooks\//, []],
  // A signed link: the signature is in the query.
  [/^GET \/v1\/messages\/\{id\}\/html$/, []],
  [/^\w+ \/v1\//, [{ bearer: [] }, { apiKey: [] }]],
];

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `GET /v1/threads/{id}/messages` → `getV1ThreadsByIdMessages`: stable, unique, URL-safe. */
export function operationIdOf(method: string, path: string): string {
  const word = (s: string) =>
    s
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join('');
  const words = path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith('{') ? `By${word(seg.slice(1, -1))}` : word(seg)));
  return method.toLowerCase() + words.join('');
}

type Json = Record<string, unknown>;

/**
 * Hoists every titled object schema (the resources: Thread, Message, …) into
 * `components.schemas` and refers to it there, so generators and readers see one named type
 * instead of the same object spelt out wherever it is used. Two different schemas under one
 * title would be a bug in the routes; they stay inline and are listed in `x-unnamed`.
 */
function nameSchemas(paths: Json, schemas: Json): { paths: Json; conflicts: string[] } {
  const conflicts: string[] = [];
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = visit(v);
    const title = out.title;
    if (typeof title !== 'string' || out.type !== 'object' || !/^\w+$/.test(title)) return out;
    const ref = { $ref: `#/components/schemas/${title}` };
    if (schemas[title] === undefined) schemas[title] = out;
    else if (JSON.stringify(schemas[title]) !== JSON.stringify(out)) {
      if (!conflicts.includes(title)) conflicts.push(title);
      return out;
    }
    return ref;
  };
  return { paths: visit(paths) as Json, conflicts };
}

/** The generated document made whole: an operationId and security on every operation, named schemas. */
function finishDocument(doc: Json): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!METHODS.has(method)) continue;
      operation.operationId ??= operationIdOf(method, path);
      const key = `${method.toUpperCase()} ${path}`;
      const security = SECURITY.find(([pattern]) => pattern.test(key))?.[1];
      if (security) operation.security ??= security;
    }
  }
  const components = { ...(doc.components as Json) };
  const schemas = { ...(components.schemas as Json) };
  const named = nameSchemas(paths, schemas);
  return {
    ...doc,
    components: { ...components, schemas },
    paths: named.paths,
    ...(named.conflicts.length ? { 'x-unnamed': named.conflicts } : {}),
  };
}

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
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  app.addSchema({ $id: 'ErrorBody', ...ErrorBody });
  app.addHook('onRoute', withErrorResponses);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'inbox',
        version: packageVersion(),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
        description:
          'A self-hosted, multi-channel messaging backend. `/v1` answers `{ data, meta }`; every error is `{ error: { code, message }, meta: { requestId } }`. Provider webhooks live under `/webhooks` and are authenticated by their signatures.',
      },
      servers: [{ url: publicUrl, description: 'this deployment (INBOX_PUBLIC_URL)' }],
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
          visitorToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'a live chat visitor token, from POST /v1/livechat/{widgetKey}/conversations',
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'INBOX_METRICS_TOKEN, when it is set' },
          refreshCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'inbox_refresh',
            description: "the console's refresh cookie (docs/auth.md)",
          },
        },
      },
    },
    transformObject: (documents) =>
      finishDocument(('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject) as Json),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, staticCSP: DOCS_CSP });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
}
