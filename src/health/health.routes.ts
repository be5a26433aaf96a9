import { sql } from 'kysely';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../deps.js';
import { BOSS_SCHEMA } from '../jobs/boss.js';
import { queues } from '../jobs/registry.js';
import { errors } from '../http/errors.js';
import { countDeadLetters } from '../webhooks-in/inbox.queries.js';

/** The pg-boss states before `completed` (its enum's order): the jobs still to be done. */
export const QUEUE_DEPTH_STATES = ['created', 'retry', 'active'] as const;

/**
 * Reads queue depth from Postgres so every process reports the same numbers. Every queue
 * of the registry gets a sample for every state, 0 when idle: a series that vanishes when a
 * queue drains would leave dashboards blank and alerts on `> N` unable to resolve.
 */
async function refreshQueueDepth(deps: Deps): Promise<void> {
  const { rows } = await sql<{ name: string; state: string; n: number }>`
    SELECT name, state::text AS state, count(*)::int AS n
    FROM ${sql.table(`${BOSS_SCHEMA}.job`)}
    WHERE state < 'completed'
    GROUP BY name, state`.execute(deps.db);
  deps.metrics.queueDepth.reset();
  for (const q of queues) for (const state of QUEUE_DEPTH_STATES) deps.metrics.queueDepth.set({ queue: q.name, state }, 0);
  for (const r of rows) deps.metrics.queueDepth.set({ queue: r.name, state: r.state }, r.n);
}

/** Extra scrape-time collectors that features register (dead-letter count, …). */
export type MetricsCollector = (deps: Deps) => Promise<void>;
export const metricsCollectors: MetricsCollector[] = [
  refreshQueueDepth,
  async (deps) => deps.metrics.deadLetters.set(await countDeadLetters(deps.db)),
];

const Status = <S extends string>(status: S) => Type.Object({ status: Type.Literal(status) });

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/healthz', { schema: { description: 'the process answers', response: { 200: Status('ok') } } }, async () => ({ status: 'ok' as const }));

  app.get('/readyz', { schema: { description: 'the database and the queue answer', response: { 200: Status('ready') } } }, async (request) => {
    try {
      await sql`SELECT 1`.execute(deps.db);
      // The queue answers when its schema is reachable through its own pool.
      if (!(await deps.boss.isInstalled())) throw new Error('queue schema is not installed');
      return { status: 'ready' as const };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw errors.unavailable('database or queue is not answering');
    }
  });

  app.get(
    '/metrics',
    { schema: { description: 'Prometheus text exposition', response: { 200: { content: { 'text/plain': { schema: Type.String() } } } } } },
    async (request, reply) => {
      const results = await Promise.allSettled(metricsCollectors.map((collect) => collect(deps)));
      for (const r of results) if (r.status === 'rejected') request.log.warn({ err: r.reason }, 'metrics collector failed');
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
};
