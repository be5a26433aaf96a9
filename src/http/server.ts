import { randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ErrorObject } from 'ajv';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { StorageUnavailableError } from '../attachments/storage.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { noteRequestWrites } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { healthRoutes } from '../health/health.routes.js';
import { type Logger, RequestLogger } from '../logger.js';
import { tracing } from '../tracing/tracing.js';
import { clientErrorHandler } from './client-errors.js';
import { errorBody } from './envelope.js';
import { AppError, errors } from './errors.js';
import { missingBoundary } from './multipart-boundary.js';
import { refuseUndeclaredFields, validationMessage, validatorCompiler } from './validation.js';

// The HTTP server every role shares. A `--role worker` process serves its ops routes on it
// (buildOpsApp) without loading the api's routes: src/app.ts adds those, and main.ts imports
// it only for a role that serves them.

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Maps anything thrown by a route to an AppError; unknown errors become a bare 500. */
function toAppError(err: FastifyError & { code?: string }, bodyLimit: number, contentType: string | undefined): AppError {
  if (err instanceof AppError) return err;
  if (err.validation) return errors.validation(validationMessage(err.validationContext ?? 'request', err.validation as ErrorObject[]));
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // Fastify's message does not name the type it refused; the header does.
      return errors.unsupportedMediaType(contentType);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidJson('request body is empty but content-type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errors.invalidJson();
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.badRequest('content-length does not match the body');
    case '22021': // character_not_in_repertoire: a NUL (U+0000) in a value bound for a text column
    case '22P05': // untranslatable_character: the same NUL in a value bound for a jsonb column (\u0000)
      return errors.badRequest('a value contains a NUL character (U+0000), which this service does not store or search for');
    case '23505': // unique_violation
      return errors.conflict('a resource with the same unique value already exists');
  }
  // The database did not answer within its timeouts: a 503 the client may retry, not a 500.
  if (isDatabaseUnavailable(err)) return errors.unavailable('the database is not answering in time; retry shortly', 1);
  // The attachment store (S3) did not answer: the same, for any route that reads or writes bytes.
  if (err instanceof StorageUnavailableError) return errors.unavailable('attachment storage is unavailable; retry shortly', 5);
  if (err instanceof SyntaxError && err.statusCode === 400) return errors.invalidJson();
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return errors.clientError(err.statusCode, err.message);
  }
  return errors.internal();
}

/**
 * Slow clients cannot hold the server: a request must arrive whole within
 * `requestTimeoutMs`, and a connection on which nothing moves for `connectionTimeoutMs` is
 * closed. Upgraded (WebSocket) connections are not subject to either; the realtime hub pings them.
 */
export const HTTP_TIMEOUTS = { requestTimeoutMs: 30_000, connectionTimeoutMs: 60_000 } as const;

/**
 * The HTTP server every role shares: timeouts, request ids and logging, the request metrics,
 * the one error body for every failure. Routes are added by the callers.
 */
export function httpServer(deps: Deps) {
  const app = Fastify({
    requestTimeout: HTTP_TIMEOUTS.requestTimeoutMs,
    connectionTimeout: HTTP_TIMEOUTS.connectionTimeoutMs,
    loggerInstance: deps.log as FastifyBaseLogger,
    // One line per request, written in onResponse below, instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's child logger is made only when the request writes a line (see RequestLogger).
    childLoggerFactory: (logger, bindings, options) =>
      new RequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    // false or a list of proxy addresses/CIDRs (INBOX_TRUST_PROXY=true is ['loopback']), never
    // Fastify's `true`, which believes every hop and lets any client name the address the
    // per-address login limit counts.
    trustProxy: deps.config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Fastify's default caps a path parameter at 100 characters (414): a widget key may have 128
    // (WIDGET_KEY), and a longer unknown one is still 404 by its route, as any unknown key.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 256 },
    // Fastify's own 503 for a request that arrives while the server closes (on a keep-alive
    // connection still open, or pipelined) is a body of its own, without a request id: the
    // onRequest hook below answers it in the envelope instead.
    return503OnClosing: false,
    // What the HTTP parser refuses before any route, in the one error envelope too.
    clientErrorHandler,
    // What the router refuses before any route (a path that does not decode, a parameter over
    // its length) is answered in the one error envelope too, not Fastify's own body.
    frameworkErrors: (err, request, reply: FastifyReply) => {
      const e = toAppError(err, deps.config.bodyLimitBytes, request.headers['content-type']);
      // The onRequest hooks do not run for these: the request id header is set here.
      reply
        .code(e.status)
        .headers({ ...e.headers, 'x-request-id': request.id })
        .send(errorBody(request.id, e.code, e.message));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // First, so a request's span covers every hook after it.
  tracing()?.instrument(app);
  app.setValidatorCompiler(validatorCompiler);
  // Many clients send `content-type: application/json` on every request, also on a POST that
  // takes no body (refresh, logout, requeue…): an empty JSON body is no body. A route that
  // takes one still says what it lacks (422); a body that is there must be JSON (400).
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.length === 0) done(null, undefined);
    else void jsonParser(request, text, done);
  });
  // Fastify parses text/plain into a string by default, which a JSON route then refused as
  // "body must be object" (422) while every other content type it does not take was a 415.
  // No route here takes text: the signed routes and the CSAT form bring parsers of their own.
  // An empty text/plain body (a client's default on a bodiless POST) is no body, as for JSON.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) done(null, undefined);
    else done(errors.unsupportedMediaType(request.headers['content-type']), undefined);
  });
  // Before any route: every body refuses fields it does not declare (422 naming the field).
  app.addHook('onRoute', refuseUndeclaredFields);
  app.decorateRequest('auth', null);

  // Once the server closes (SIGTERM), a request that still arrives — on a connection busy when
  // the close began, which Fastify marks `connection: close` — is refused before any work: 503
  // with retry-after, so the client (a provider, a load balancer) sends it to a process that
  // stays. The ones already in flight finish.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Callback-style hooks: they run on every request, webhook ingestion included, and
  // Fastify runs these without the promise an async hook costs.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done(closing ? errors.shuttingDown() : missingBoundary(request.headers['content-type']));
  });
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.countRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    // An accepted provider delivery is counted (inbox_webhook_deliveries_total), not logged:
    // at thousands a second its line would cost more than storing it. Everything else, a
    // refused delivery included, gets one compact line.
    if (!(reply.statusCode < 400 && request.method === 'POST' && route.startsWith('/webhooks/'))) {
      request.log.info({ req: request, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
    }
    done();
  });

  // Only with a read replica: a caller's reads after its own writes stay on the primary.
  if (deps.replica) {
    app.addHook('onSend', (request, _reply, payload, done) => {
      noteRequestWrites(deps, request);
      done(null, payload);
    });
  }

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = toAppError(err, deps.config.bodyLimitBytes, request.headers['content-type']);
    if (appError.status >= 500 && !appError.chosen) request.log.error({ err }, 'request failed');
    reply
      .code(appError.status)
      .headers(appError.headers)
      .send(errorBody(request.id, appError.code, appError.message));
  });
  app.setNotFoundHandler((request, reply) => {
    const e = errors.noRoute(request.method, request.url.split('?')[0]!);
    reply.code(e.status).send(errorBody(request.id, e.code, e.message));
  });
  return app;
}

/**
 * What a `--role worker` process serves on INBOX_METRICS_PORT: /healthz, /readyz and /metrics
 * only, so workers are probed and scraped like the api without serving any of its routes.
 */
export async function buildOpsApp(deps: Deps, options: { notReady?: () => string | undefined } = {}): Promise<FastifyInstance> {
  const app = httpServer(deps);
  await app.register(healthRoutes, { deps, ...(options.notReady ? { notReady: options.notReady } : {}) });
  return app;
}
