import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AttachmentResource, attachmentResource, signedUrls } from '../attachments/attachments.resources.js';
import { multipartOptions, readUpload } from '../attachments/multipart-upload.js';
import { bearerToken } from '../auth/auth.js';
import { WIDGET_KEY } from '../connections/allowed-origins.js';
import { LivechatSettingsFields } from '../connections/livechat-settings.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, NoContent } from '../http/schemas.js';
import { MessageResource } from '../messaging/messaging.resources.js';
import { originAllowed } from './cors.js';
import { findVisitor, findWidget, listVisitorMessages, type Visitor, type Widget } from './livechat.queries.js';
import { hashVisitorToken, postVisitorMessage, startConversation, uploadVisitorFile, visitorMaxBytes } from './livechat.service.js';
import { VisitorHub } from './visitor-hub.js';
import { requireSocketOrigin, VisitorSocketLimits } from './visitor-limits.js';
import { visitorMessages } from './visitor-message.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Live chat: the widget the path names (set by the visitor routes' first hook). */
    widget: Widget | null;
    /** Live chat: the visitor whose token the request carries. */
    visitor: Visitor | null;
  }
}

const WidgetParams = Type.Object({
  widgetKey: Type.String({ minLength: 1, maxLength: 128, description: "the widget key: the livechat connection's externalAccountId" }),
});
const VisitorToken = Type.Object(
  { visitorToken: Type.String(), threadId: Type.Integer() },
  {
    title: 'LivechatConversation',
    description: 'visitorToken is shown in this answer only; send it as Authorization: Bearer <visitorToken>',
  },
);
const WidgetConfig = Type.Object(LivechatSettingsFields, { title: 'LivechatWidgetConfig' });
const ConversationBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  email: Type.Optional(Type.String({ format: 'email', maxLength: 320 })),
});
const VisitorMessageBody = Type.Object({
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  attachmentIds: Type.Optional(
    Type.Array(BigId, { maxItems: 10, description: "the visitor's own uploads (POST …/attachments) this message carries" }),
  ),
});
const PREFLIGHT = {
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'authorization, content-type, x-request-id',
  'access-control-max-age': '600',
};

const widgetOf = (request: FastifyRequest) => request.widget!;
const visitorOf = (request: FastifyRequest) => request.visitor!;

/**
 * Live chat's visitor routes (docs/livechat.md), `/v1/livechat/:widgetKey/*`. No credential
 * but the public widget key and, once a conversation is open, the visitor's token. In order:
 * an unknown widget key is 404 whatever else the request carries; a browser origin the widget
 * does not allow is 403 (and gets no CORS headers); then a missing or bad token is 401.
 */
export const livechatRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const hub = new VisitorHub(deps);
  const limits = new VisitorSocketLimits(
    { perAddress: deps.config.livechatMaxSocketsPerAddress, perProcess: deps.config.livechatMaxSocketsPerProcess },
    deps.metrics,
  );
  app.addHook('onReady', () => hub.start());
  app.addHook('onClose', () => hub.close());
  await app.register(fastifyMultipart, multipartOptions(visitorMaxBytes(deps.config)));
  app.decorateRequest('widget', null);
  app.decorateRequest('visitor', null);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('vary', 'Origin');
    const { widgetKey } = request.params as { widgetKey?: unknown };
    const widget = typeof widgetKey === 'string' && WIDGET_KEY.test(widgetKey) ? await findWidget(deps.db, widgetKey) : undefined;
    if (!widget) throw errors.notFound('widget');
    const origin = request.headers.origin;
    if (origin !== undefined) {
      if (!originAllowed(widget.allowed_origins, origin, request.host))
        throw errors.forbidden('this origin may not use this widget: it is not among its allowedOrigins');
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', 'retry-after, x-request-id');
    }
    request.widget = widget;
  });

  /** The visitor of the token in `Authorization: Bearer` (or, for the socket, `?visitorToken=`). */
  const requireVisitor =
    (options: { query?: boolean } = {}) =>
    async (request: FastifyRequest, _reply: FastifyReply) => {
      const fromQuery = options.query ? (request.query as { visitorToken?: unknown }).visitorToken : undefined;
      const token = bearerToken(request) ?? (typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined);
      if (token === undefined) throw errors.unauthorized('a visitor token is required: Authorization: Bearer <visitorToken>');
      const visitor = await findVisitor(deps.db, widgetOf(request).id, hashVisitorToken(token), deps.now());
      if (!visitor) throw errors.unauthorized('invalid or expired visitor token');
      request.visitor = visitor;
    };

  for (const path of ['/:widgetKey/config', '/:widgetKey/conversations', '/:widgetKey/messages', '/:widgetKey/attachments']) {
    app.options(
      path,
      {
        schema: {
          summary: 'CORS preflight',
          description: 'CORS preflight: answered for the origins the widget allows',
          params: WidgetParams,
          response: { 204: NoContent },
        },
      },
      async (_request, reply) => {
        reply.code(204).headers(PREFLIGHT);
      },
    );
  }

  app.get(
    '/:widgetKey/config',
    {
      schema: {
        summary: "The widget's settings",
        description:
          "What the widget reads at start: its heading, accent colour and greeting (null = the widget's default) and the fields it requires before the first message. No visitor token.",
        params: WidgetParams,
        response: { 200: Envelope(WidgetConfig) },
      },
    },
    async (request) => {
      const widget = widgetOf(request);
      return envelope(request, {
        title: widget.livechat_title,
        colour: widget.livechat_colour,
        greeting: widget.livechat_greeting,
        preChatForm: widget.livechat_pre_chat,
      });
    },
  );

  app.post(
    '/:widgetKey/conversations',
    {
      // The body is optional: a visitor may start without a name.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        summary: 'Start a visitor conversation',
        description: 'A visitor opens a conversation: its thread and a visitor token (30 days). Limited per client address (429).',
        params: WidgetParams,
        body: ConversationBody,
        response: { 201: Envelope(VisitorToken) },
      },
    },
    async (request, reply) => {
      const opened = await startConversation(deps, widgetOf(request), { ...request.body, ip: request.ip });
      reply.code(201);
      return envelope(request, opened);
    },
  );

  app.post(
    '/:widgetKey/messages',
    {
      preValidation: requireVisitor(),
      schema: {
        summary: 'Send a visitor message',
        description: 'The visitor writes in its thread (Authorization: Bearer <visitorToken>). Limited per visitor (429).',
        params: WidgetParams,
        body: VisitorMessageBody,
        response: { 201: Envelope(MessageResource) },
      },
    },
    async (request, reply) => {
      const message = await postVisitorMessage(deps, widgetOf(request), visitorOf(request), request.body);
      reply.code(201);
      const [view] = await visitorMessages(deps, [message]);
      return envelope(request, view!);
    },
  );

  app.post(
    '/:widgetKey/attachments',
    {
      preValidation: requireVisitor(),
      schema: {
        summary: 'Upload a visitor file',
        description:
          'multipart/form-data with the file in the field `file` (Authorization: Bearer <visitorToken>); then send it with ' +
          '`POST …/messages {attachmentIds}`. Limited per visitor like messages, and per widget to INBOX_LIVECHAT_UPLOAD_BYTES_PER_HOUR bytes an hour (429 with retry-after); a file over INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES → 413. An upload not sent within an hour is deleted.',
        consumes: ['multipart/form-data'],
        params: WidgetParams,
        response: { 201: Envelope(AttachmentResource) },
      },
    },
    async (request, reply) => {
      const file = await readUpload(request);
      const length = Number(request.headers['content-length']);
      const row = await uploadVisitorFile(deps, visitorOf(request), file, Number.isSafeInteger(length) && length >= 0 ? length : undefined);
      reply.code(201);
      return envelope(request, attachmentResource(row, signedUrls(deps)));
    },
  );

  app.get(
    '/:widgetKey/messages',
    {
      preValidation: requireVisitor(),
      schema: {
        summary: "List the visitor's own messages",
        description: "The visitor's own thread, both directions, newest first (cursor pages).",
        params: WidgetParams,
        querystring: CursorQuery,
        response: { 200: CursorPage(MessageResource) },
      },
    },
    async (request) => {
      const page = await listVisitorMessages(deps.db, visitorOf(request), parseCursorQuery(request.query));
      return envelope(request, await visitorMessages(deps, page.items), page.meta);
    },
  );

  app.route({
    method: 'GET',
    url: '/:widgetKey/socket',
    onRequest: requireSocketOrigin,
    preValidation: requireVisitor({ query: true }),
    schema: {
      hide: true,
      summary: 'Visitor socket',
      params: WidgetParams,
      querystring: Type.Object({ visitorToken: Type.Optional(Type.String()) }),
    },
    // A plain GET (no upgrade) gets 426 in the error envelope, not the plugin's bare 404.
    handler: async () => {
      throw errors.upgradeRequired();
    },
    wsHandler: (socket, request) => {
      if (limits.admit(socket, request.ip)) hub.add({ socket, visitor: visitorOf(request) });
    },
  });
};
