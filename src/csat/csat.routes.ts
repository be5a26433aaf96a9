import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import { CursorPage, Envelope, NoContent, Nullable, Timestamp } from '../http/schemas.js';
import { CSAT_COMMENT_MAX, csatResponses, rateSurvey, viewSurvey } from './csat.service.js';
import { type RenderedPage, surveyPage, unknownSurveyPage } from './csat-page.js';

const FORM = 'application/x-www-form-urlencoded';
/** A rating's form is a few fields; anything larger is not one. */
const FORM_LIMIT = 16 * 1024;

const TokenParams = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 128, description: "the survey link's token" }),
});
const RatingBody = Type.Object({
  rating: Type.Integer({ minimum: 1, maximum: 5, description: '1 (very dissatisfied) to 5 (very satisfied)' }),
  comment: Type.Optional(Type.String({ maxLength: CSAT_COMMENT_MAX, description: "the contact's words; blank = none" })),
});
const Rated = Type.Object(
  {
    rating: Type.Integer(),
    comment: Nullable(Type.String()),
    ratedAt: Timestamp,
    closesAt: Type.String({ format: 'date-time', description: 'until when the rating may be changed' }),
  },
  { title: 'CsatRating' },
);
export const CsatResponse = Type.Object(
  {
    conversationId: Type.Integer(),
    threadId: Type.Integer(),
    contactId: Type.Integer(),
    connectionId: Type.Integer(),
    assigneeId: Nullable(Type.Integer({ description: 'the assignee when the conversation was resolved' })),
    teamId: Nullable(Type.Integer({ description: 'the team when the conversation was resolved' })),
    rating: Type.Integer({ minimum: 1, maximum: 5 }),
    comment: Nullable(Type.String()),
    ratedAt: Timestamp,
    resolvedAt: Nullable(Timestamp),
  },
  { title: 'CsatResponse' },
);

const Html = { content: { 'text/html': { schema: Type.String() } } };

/** A page that runs nothing, leaks no link through a Referer and is never framed or cached. */
function sendPage(reply: FastifyReply, status: number, page: RenderedPage) {
  return reply
    .code(status)
    .header('content-security-policy', page.csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.html);
}

/** A form's fields; a number typed as text becomes a number, anything else stays text (then a 422). */
function parseForm(text: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(text)) fields[k] = k === 'rating' && /^\d{1,3}$/.test(v) ? Number(v) : v;
  return fields;
}

const isForm = (request: FastifyRequest) => (request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM);

/**
 * The survey link's page and answer (docs/reports.md, "CSAT"), `/csat/:token`: no login, the
 * token is the credential. `POST` takes JSON (the live chat widget, any client; any origin, no
 * cookies) or a plain form post (the page itself, JavaScript or not).
 */
export const csatPublicRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_request, body, done) =>
    done(null, parseForm(body as string)),
  );

  app.get(
    '/:token',
    {
      schema: {
        summary: 'The CSAT rating page',
        description:
          'A small page with the question, five choices and a comment, posting to itself; no script, strict CSP. A token that names no survey → 404 page; a survey older than 7 days → 410 page.',
        params: TokenParams,
        response: { 200: Html },
      },
    },
    async (request, reply) => {
      const view = await viewSurvey(deps, request.params.token);
      if (!view) return sendPage(reply, 404, unknownSurveyPage());
      return sendPage(reply, view.closed ? 410 : 200, surveyPage(view));
    },
  );

  app.options(
    '/:token',
    {
      schema: {
        summary: 'CORS preflight',
        description: 'CORS preflight of the rating: any origin',
        params: TokenParams,
        response: { 204: NoContent },
      },
    },
    async (_request, reply) => {
      reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'POST, OPTIONS')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '600');
    },
  );

  app.post(
    '/:token',
    {
      schema: {
        summary: 'Rate a conversation (CSAT)',
        description:
          'JSON or a form post: `{rating: 1–5, comment?}`. Changeable for 7 days after the survey was sent, then 410 `gone`; a token that names no survey → 404. A form post is answered with the page, saying the rating is saved.',
        consumes: ['application/json', FORM],
        params: TokenParams,
        body: RatingBody,
        response: { 200: { content: { 'application/json': { schema: Envelope(Rated) }, 'text/html': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      reply.header('access-control-allow-origin', '*');
      const rated = await rateSurvey(deps, request.params.token, request.body);
      if (isForm(request)) {
        const view = await viewSurvey(deps, request.params.token);
        if (view) return sendPage(reply, 200, surveyPage(view, { justRated: true }));
      }
      return envelope(request, rated);
    },
  );
};

/** `GET /v1/csat-responses` (docs/reports.md, "CSAT"): admins, as the reports. */
export const csatResponsesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/csat-responses',
    {
      schema: {
        summary: 'The CSAT ratings received, newest first',
        querystring: Type.Object({
          ...CursorQuery.properties,
          from: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 40,
              description: 'rated at or after: a date (YYYY-MM-DD, in `timezone`) or an instant with an offset',
            }),
          ),
          to: Type.Optional(
            Type.String({ minLength: 1, maxLength: 40, description: 'rated before: a date (included) or an instant (excluded)' }),
          ),
          timezone: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 64,
              description: "the zone of dates: an IANA zone; default the workspace's business hours' zone, else UTC",
            }),
          ),
          rating: Type.Optional(Type.String({ maxLength: 20, description: 'only these ratings: 1 to 5, comma-separated (4,5)' })),
        }),
        response: { 200: CursorPage(CsatResponse) },
      },
    },
    async (request) => {
      const page = await csatResponses(deps, tenantOf(request), request.query, parseCursorQuery(request.query));
      return envelope(request, page.items, page.meta);
    },
  );
};
