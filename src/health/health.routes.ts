import { sql } from 'kysely';
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { BOSS_SCHEMA } from '../jobs/boss.js';
import { errors } from '../http/errors.js';
import { countDeadLetters } from '../inbox/inbox.queries.js';

/** Reads queue depth from Postgres so every process reports the same numbers. */
async function refreshQueueDepth(deps: Deps): Promise<void> {
  const { rows } = await sql<{ name: string; state: string; n: number }>`
    SELECT name, state::text AS state, count(*)::int AS n
    FROM ${sql.table(`${BOSS_SCHEMA}.job`)}
    WHERE state < 'completed'
    GROUP BY name, state`.execute(deps.db);
  deps.metrics.queueDepth.reset();
  for (const r of rows) deps.metrics.queueDepth.set({ queue: r.name, state: r.state }, r.n);
}

/** Extra scrape-time collectors that features register (dead-letter count, …). */
export type MetricsCollector = (deps: Deps) => Promise<void>;
export const metricsCollectors: MetricsCollector[] = [
  refreshQueueDepth,
  async (deps) => deps.metrics.deadLetters.set(await countDeadLetters(deps.db)),
];

export const healthRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (request) => {
    try {
      await sql`SELECT 1`.execute(deps.db);
      // The queue answers when its schema is reachable through its own pool.
      if (!(await deps.boss.isInstalled())) throw new Error('queue schema is not installed');
      return { status: 'ready' };
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed');
      throw errors.unavailable('database or queue is not answering');
    }
  });

  app.get('/metrics', async (request, reply) => {
    const results = await Promise.allSettled(metricsCollectors.map((collect) => collect(deps)));
    for (const r of results) if (r.status === 'rejected') request.log.warn({ err: r.reason }, 'metrics collector failed');
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
};
