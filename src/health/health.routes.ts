import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { bearerToken } from '../auth/auth.js';
import { safeEqual } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { errorBody } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { ErrorBody } from '../http/schemas.js';
import { BOSS_SCHEMA } from '../jobs/boss.js';
import { queues } from '../jobs/registry.js';
import { countDeadLetters } from '../webhooks-in/inbox.queries.js';

/** The pg-boss states before `completed` (its enum's order): the jobs still to be done. */
export const QUEUE_DEPTH_STATES = ['created', 'retry', 'active'] as const;

/**
 * Reads queue depth, and the age of the oldest job waiting in each queue, from Postgres in one
 * statement over the unfinished jobs only, so every process reports the same numbers. Every
 * queue of the registry gets a sample for every state, 0 when idle: a series that vanishes when
 * a queue drains would leave dashboards blank and alerts on `> N` unable to resolve. A job
 * waits from when it became due (`start_after`: its creation, or its retry's time); a job
 * scheduled for later is not waiting yet.
 */
async function refreshQueueDepth(deps: Deps): Promise<void> {
  const { rows } = await sql<{ name: string; state: string; n: number; oldest: number | null }>`
    SELECT name, state::text AS state, count(*)::int AS n,
      extract(epoch FROM now() - min(start_after) FILTER (WHERE state < 'active' AND start_after <= now()))::float8 AS oldest
    FROM ${sql.table(`${BOSS_SCHEMA}.job`)}
    WHERE state < 'completed'
    GROUP BY name, state`.execute(deps.db);
  deps.metrics.queueDepth.reset();
  deps.metrics.oldestJobAge.reset();
  for (const q of queues) {
    deps.metrics.oldestJobAge.set({ queue: q.name }, 0);
    for (const state of QUEUE_DEPTH_STATES) deps.metrics.queueDepth.set({ queue: q.name, state }, 0);
  }
  const oldest = new Map<string, number>();
  for (const r of rows) {
    deps.metrics.queueDepth.set({ queue: r.name, state: r.state }, r.n);
    if (r.oldest !== null) oldest.set(r.name, Math.max(oldest.get(r.name) ?? 0, r.oldest));
  }
  for (const [queue, age] of oldest) deps.metrics.oldestJobAge.set({ queue }, age);
}

/** Extra scrape-time collectors that features register (dead-letter count, …). */
export type MetricsCollector = (deps: Deps) => Promise<void>;
export const metricsCollectors: MetricsCollector[] = [
  refreshQueueDepth,
  async (deps) => deps.metrics.deadLetters.set(await countDeadLetters(deps.db)),
];

const Status = <S extends string>(status: S) => Type.Object({ status: Type.Literal(status) });

/** Scrape-time reads of shared state run at most this often per process (docs/security.md). */
export const METRICS_COLLECT_INTERVAL_MS = 15_000;

export interface HealthOptions {
  deps: Deps;
  /**
   * Why this process is not ready beyond its database and queue, or undefined when it is: role
   * `all` is not ready while its worker process is down.
   */
  notReady?: () => string | undefined;
}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { deps, notReady }) => {
  // A scrape reads Postgres at most once per interval, and concurrent scrapes share one read:
  // anyone who can reach /metrics must not be able to make the database count jobs in a loop.
  let collectedAt = Number.NEGATIVE_INFINITY;
  let collecting: Promise<void> | undefined;
  const collectFresh = (log: FastifyBaseLogger): Promise<void> => {
    if (collecting !== undefined) return collecting;
    if (deps.now().getTime() - collectedAt < METRICS_COLLECT_INTERVAL_MS) return Promise.resolve();
    collecting = (async () => {
      const results = await Promise.allSettled(metricsCollectors.map((collect) => collect(deps)));
      for (const r of results) if (r.status === 'rejected') log.warn({ err: r.reason }, 'metrics collector failed');
      // For an alert that needs no probe of its own: Postgres did not answer this process.
      deps.metrics.ready.set(results.every((r) => r.status === 'fulfilled') ? 1 : 0);
      collectedAt = deps.now().getTime();
    })().finally(() => (collecting = undefined));
    return collecting;
  };

  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', description: 'the process answers', response: { 200: Status('ok') } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness',
        description: 'the database and the queue answer (role all: and its worker process runs)',
        response: { 200: Status('ready'), 503: ErrorBody },
      },
    },
    async (request, reply) => {
      // Not ready is an answer, not a failure of the request: a probe asks every few seconds
      // while the process starts, and each 503 through the error handler was an error line.
      const notReadyBecause = (why: string) => {
        const e = errors.unavailable(why);
        return reply.code(503).send(errorBody(request.id, e.code, e.message));
      };
      try {
        await sql`SELECT 1`.execute(deps.db);
        // The queue answers when its schema is reachable through its own pool.
        if (!(await deps.boss.isInstalled())) throw new Error('queue schema is not installed');
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        return notReadyBecause('database or queue is not answering');
      }
      const why = notReady?.();
      if (why !== undefined) return notReadyBecause(why);
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: 'Prometheus text exposition',
        response: { 200: { content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const token = deps.config.metricsToken;
      if (token !== undefined) {
        const presented = bearerToken(request);
        if (presented === undefined || !safeEqual(presented, token))
          throw errors.unauthorized('metrics need Authorization: Bearer <INBOX_METRICS_TOKEN>');
      }
      await collectFresh(request.log);
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.exposition();
    },
  );
};
