import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope, Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { GROUP_BYS, INTERVALS, METRICS } from './reports.queries.js';
import { conversationsCsv, readRange, summary, timeseries } from './reports.service.js';

const RangeQuery = {
  from: Type.String({
    minLength: 1,
    maxLength: 40,
    description: 'a date (YYYY-MM-DD, the whole day in `timezone`) or an instant with an offset',
  }),
  to: Type.String({ minLength: 1, maxLength: 40, description: 'a date (included) or an instant (excluded)' }),
  timezone: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "an IANA zone; default the workspace's business hours' zone, else UTC" }),
  ),
};

const Stats = Type.Object({ median: Nullable(Type.Number()), p90: Nullable(Type.Number()), average: Nullable(Type.Number()) });

const SummaryGroup = Type.Object({
  group: Nullable(
    Type.Object({
      id: Nullable(
        Type.Union([Type.Integer(), Type.String()], { description: 'the user, team or connection id, or the label; null = none' }),
      ),
      name: Nullable(Type.String()),
    }),
  ),
  conversations: Type.Integer({ description: 'opened in the range' }),
  resolved: Type.Integer({ description: 'resolved in the range' }),
  firstResponseSeconds: Stats,
  resolutionSeconds: Stats,
  business: Type.Object({ firstResponseSeconds: Stats, resolutionSeconds: Stats }),
  messagesIn: Type.Integer(),
  messagesOut: Type.Integer(),
  slaBreaches: Type.Integer(),
  csat: Type.Object({ responses: Type.Integer(), average: Nullable(Type.Number()), satisfiedShare: Nullable(Type.Number()) }),
});

export const ReportSummary = Type.Object(
  {
    from: Timestamp,
    to: Timestamp,
    timezone: Type.String(),
    groupBy: StringEnum(GROUP_BYS),
    groups: Type.Array(SummaryGroup),
  },
  { title: 'ReportSummary' },
);

/** `/v1/reports` (docs/reports.md): admins (a JWT admin or an `admin` key) read them. */
export const reportsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/summary',
    {
      schema: {
        summary: 'Conversation figures of a range, for the workspace or by agent, team, connection or label',
        querystring: Type.Object({
          ...RangeQuery,
          groupBy: Type.Optional(
            StringEnum(GROUP_BYS, { description: 'one group for the workspace (default), or one per agent, team, connection or label' }),
          ),
        }),
        response: { 200: Envelope(ReportSummary) },
      },
    },
    async (request) => {
      const db = readFrom(deps, request);
      const range = await readRange(db, tenantOf(request).workspaceId, request.query);
      return envelope(request, await summary(db, range, request.query.groupBy ?? 'none'));
    },
  );

  app.get(
    '/timeseries',
    {
      schema: {
        summary: 'One figure over time, every bucket present',
        querystring: Type.Object({
          ...RangeQuery,
          metric: StringEnum(METRICS, { description: 'the figure of each bucket' }),
          interval: Type.Optional(StringEnum(INTERVALS, { description: 'the length of a bucket, local to `timezone` (default day)' })),
        }),
        response: { 200: Envelope(Type.Array(Type.Object({ start: Timestamp, value: Nullable(Type.Number()) }))) },
      },
    },
    async (request) => {
      const db = readFrom(deps, request);
      const range = await readRange(db, tenantOf(request).workspaceId, request.query);
      return envelope(request, await timeseries(db, range, request.query.metric, request.query.interval ?? 'day'));
    },
  );

  app.get(
    '/conversations.csv',
    {
      schema: {
        summary: 'Every conversation opened in the range as CSV (RFC 4180), streamed',
        querystring: Type.Object(RangeQuery),
        response: {
          200: {
            description: 'one row per conversation, header row first',
            content: { 'text/csv': { schema: Type.Unsafe<Readable>({ type: 'string' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const db = readFrom(deps, request);
      const range = await readRange(db, tenantOf(request).workspaceId, request.query);
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="conversations.csv"')
        .header('cache-control', 'no-store');
      return reply.send(conversationsCsv(db, range));
    },
  );
};
