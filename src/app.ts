import { randomUUID } from 'node:crypto';
import fastifyJwt from '@fastify/jwt';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import fastifyWebsocket from '@fastify/websocket';
import type { ErrorObject } from 'ajv';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, LogController } from 'fastify';
import { accountsRoutes } from './accounts/accounts.routes.js';
import { aiRoutes } from './ai/ai.routes.js';
import { apiKeysRoutes } from './api-keys/api-keys.routes.js';
import { attachmentsRoutes } from './attachments/attachments.routes.js';
import { StorageUnavailableError } from './attachments/storage.js';
import { auditRoutes } from './audit/audit.routes.js';
import { accountLinksRoutes } from './auth/account-links.routes.js';
import { passwordRoutes } from './auth/password.routes.js';
import { personalAccessTokensRoutes } from './auth/personal-access-tokens.routes.js';
import { ssoRoutes } from './auth/sso.routes.js';
import { twoFactorRoutes } from './auth/two-factor.routes.js';
import { userRoutes } from './auth/user.routes.js';
import { automationRulesRoutes } from './automation/automation-rules.routes.js';
import { macrosRoutes } from './automation/macros.routes.js';
import { cannedResponsesRoutes } from './canned-responses/canned-responses.routes.js';
import { connectionsRoutes } from './connections/connections.routes.js';
import { telegramWebhookRoutes } from './connections/telegram-webhook.routes.js';
import { templatesRoutes } from './connections/templates.routes.js';
import { contactsRoutes } from './contacts/contacts.routes.js';
import { csatPublicRoutes, csatResponsesRoutes } from './csat/csat.routes.js';
import { isDatabaseUnavailable } from './db/database.js';
import { noteRequestWrites } from './db/replica.js';
import type { Deps } from './deps.js';
import { exportsRoutes } from './exports/exports.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { clientErrorHandler } from './http/client-errors.js';
import { consoleRoutes } from './http/console.routes.js';
import { errorBody } from './http/envelope.js';
import { AppError, errors } from './http/errors.js';
import { missingBoundary } from './http/multipart-boundary.js';
import { registerOpenApi } from './http/openapi.js';
import { refuseUndeclaredFields, validationMessage, validatorCompiler } from './http/validation.js';
import { blockVisitorRoutes } from './livechat/block-visitor.routes.js';
import { livechatRoutes } from './livechat/livechat.routes.js';
import { widgetRoutes } from './livechat/widget.routes.js';
import { type Logger, RequestLogger } from './logger.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import { notificationsRoutes } from './notifications/notifications.routes.js';
import { operatorRoutes } from './operator/operator.routes.js';
import { realtimeRoutes } from './realtime/realtime.routes.js';
import { conversationsRoutes } from './replies/conversations.routes.js';
import { repliesRoutes } from './replies/replies.routes.js';
import { reportsRoutes } from './reports/reports.routes.js';
import { slaPoliciesRoutes } from './sla/sla-policies.routes.js';
import { teamsRoutes } from './teams/teams.routes.js';
import { emailFrameRoutes } from './threads/email-frame.routes.js';
import { labelsRoutes } from './threads/labels.routes.js';
import { searchRoutes } from './threads/search.routes.js';
import { threadWorkflowRoutes } from './threads/thread-workflow.routes.js';
import { threadsRoutes } from './threads/threads.routes.js';
import { viewingRoutes } from './threads/viewing.routes.js';
import { tracing } from './tracing/tracing.js';
import type { PresenceTimings } from './users/presence.js';
import { usersRoutes } from './users/users.routes.js';
import { deadLetterRoutes } from './webhooks-in/dead-letter.routes.js';
import { InboxWriter } from './webhooks-in/inbox-writer.js';
import { operatorInboxRoutes } from './webhooks-in/operator-inbox.routes.js';
import { webhooksRoutes } from './webhooks-in/webhooks.routes.js';
import { endpointsRoutes } from './webhooks-out/endpoints.routes.js';
import { eventsRoutes } from './webhooks-out/events.routes.js';
import { engageRoutes } from './workspaces/engage.routes.js';
import { workspaceSettingsRoutes } from './workspaces/workspace-settings.routes.js';

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

export interface AppOptions {
  /** The ingestion writer (tests pass one to watch it); one is made from deps otherwise. */
  inboxWriter?: InboxWriter;
  /** Where the built agent console is (default dist/console, as `npm run build` writes it). */
  consoleDir?: string;
  /** The realtime heartbeat and the delay before `offline`: tests shorten them, nothing else sets them. */
  presence?: Partial<PresenceTimings>;
  /** Why the process is not ready besides its database and queue (role `all`: its worker process is down). */
  notReady?: () => string | undefined;
}

/**
 * The HTTP server every role shares: timeouts, request ids and logging, the request metrics,
 * the one error body for every failure. Routes are added by the callers.
 */
function httpServer(deps: Deps) {
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
export async function buildOpsApp(deps: Deps, options: Pick<AppOptions, 'notReady'> = {}): Promise<FastifyInstance> {
  const app = httpServer(deps);
  await app.register(healthRoutes, { deps, ...(options.notReady ? { notReady: options.notReady } : {}) });
  return app;
}

/**
 * Builds the HTTP app on already-created infrastructure. No listening, no process hooks:
 * the process entry (main.ts) and the tests own those.
 */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = httpServer(deps);

  // HS256 only: a token naming any other algorithm (or none) is refused.
  await app.register(fastifyJwt, { secret: deps.jwtSecret, sign: { algorithm: 'HS256' }, verify: { algorithms: ['HS256'] } });
  await app.register(fastifyWebsocket, {
    options: { maxPayload: 64 * 1024 },
    // The plugin's own preClose closes every socket with no code (the peer reads 1005) before
    // the hubs' onClose hooks run: say 1001, going away, so clients know to reconnect. New
    // upgrades are refused (503) once the server is closing.
    preClose(done) {
      for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down');
      this.websocketServer.close();
      done();
    },
  });

  await registerOpenApi(app, deps.config.publicUrl);
  await app.register(healthRoutes, { deps, ...(options.notReady ? { notReady: options.notReady } : {}) });
  await app.register(userRoutes, { deps, prefix: '/api/user' });
  await app.register(ssoRoutes, { deps, prefix: '/auth/sso' });
  await app.register(accountLinksRoutes, { deps, prefix: '/api/user' });
  await app.register(personalAccessTokensRoutes, { deps, prefix: '/v1/personal-access-tokens' });
  await app.register(accountsRoutes, { deps, prefix: '/v1/accounts' });
  await app.register(realtimeRoutes, { deps, prefix: '/v1', ...(options.presence ? { presence: options.presence } : {}) });
  await app.register(engageRoutes, { deps, prefix: '/v1/engage' });
  await app.register(apiKeysRoutes, { deps, prefix: '/v1/api-keys' });
  await app.register(connectionsRoutes, { deps, prefix: '/v1/connections' });
  await app.register(templatesRoutes, { deps, prefix: '/v1/connections' });
  await app.register(telegramWebhookRoutes, { deps, prefix: '/v1/connections' });
  await app.register(operatorRoutes, { deps, prefix: '/v1/operator' });
  await app.register(operatorInboxRoutes, { deps, prefix: '/v1/operator' });
  await app.register(deadLetterRoutes, { deps, prefix: '/v1/admin' });
  await app.register(threadsRoutes, { deps, prefix: '/v1' });
  await app.register(searchRoutes, { deps, prefix: '/v1' });
  await app.register(labelsRoutes, { deps, prefix: '/v1' });
  await app.register(repliesRoutes, { deps, prefix: '/v1' });
  await app.register(emailFrameRoutes, { deps, prefix: '/v1' });
  await app.register(conversationsRoutes, { deps, prefix: '/v1' });
  await app.register(attachmentsRoutes, { deps, prefix: '/v1' });
  await app.register(blockVisitorRoutes, { deps, prefix: '/v1' });
  await app.register(usersRoutes, { deps, prefix: '/v1/users' });
  await app.register(passwordRoutes, { deps, prefix: '/v1/users' });
  await app.register(twoFactorRoutes, { deps, prefix: '/v1/users' });
  await app.register(teamsRoutes, { deps, prefix: '/v1/teams' });
  await app.register(slaPoliciesRoutes, { deps, prefix: '/v1/sla-policies' });
  await app.register(reportsRoutes, { deps, prefix: '/v1/reports' });
  await app.register(csatResponsesRoutes, { deps, prefix: '/v1' });
  await app.register(csatPublicRoutes, { deps, prefix: '/csat' });
  await app.register(automationRulesRoutes, { deps, prefix: '/v1/automation-rules' });
  await app.register(macrosRoutes, { deps, prefix: '/v1' });
  await app.register(notificationsRoutes, { deps, prefix: '/v1/notifications' });
  await app.register(viewingRoutes, { deps, prefix: '/v1' });
  await app.register(workspaceSettingsRoutes, { deps, prefix: '/v1' });
  await app.register(auditRoutes, { deps, prefix: '/v1' });
  await app.register(contactsRoutes, { deps, prefix: '/v1/contacts' });
  await app.register(exportsRoutes, { deps, prefix: '/v1' });
  await app.register(cannedResponsesRoutes, { deps, prefix: '/v1/canned-responses' });
  await app.register(threadWorkflowRoutes, { deps, prefix: '/v1' });
  await app.register(endpointsRoutes, { deps, prefix: '/v1/webhook-endpoints' });
  await app.register(eventsRoutes, { deps, prefix: '/v1' });
  await app.register(aiRoutes, { deps, prefix: '/v1' });
  await app.register(mcpRoutes, { deps });
  await app.register(livechatRoutes, { deps, prefix: '/v1/livechat' });
  await app.register(widgetRoutes, { deps, prefix: '/livechat' });
  await app.register(consoleRoutes, { prefix: '/app', ...(options.consoleDir ? { dir: options.consoleDir } : {}) });
  await app.register(webhooksRoutes, { deps, writer: options.inboxWriter ?? new InboxWriter(deps), prefix: '/webhooks' });

  return app;
}
