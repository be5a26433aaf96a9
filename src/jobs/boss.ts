import { PgBoss } from 'pg-boss';
import type { Logger } from '../logger.js';
import { tracing } from '../tracing/tracing.js';

export const BOSS_SCHEMA = 'pgboss';

/**
 * How often the supervisor looks for jobs whose worker went silent (heartbeat) or overran
 * (expiry), in seconds. pg-boss's default is a minute, which, on top of a lapse, kept the jobs of
 * a killed worker away for up to two and a half minutes. A pass claims each queue for one
 * process at a time and its aggregate counts only unfinished jobs, so every 5 s costs little.
 */
export const SUPERVISE_INTERVAL_SECONDS = 5;

/** Creates and starts pg-boss on `url` (it installs or upgrades its schema on start). */
export async function startBoss(
  url: string,
  log: Logger,
  options: { max?: number; supervise?: boolean; schedule?: boolean; migrate?: boolean } = {},
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: BOSS_SCHEMA,
    max: options.max ?? 10,
    application_name: 'inbox-queue',
    supervise: options.supervise ?? true,
    superviseIntervalSeconds: SUPERVISE_INTERVAL_SECONDS,
    monitorIntervalSeconds: SUPERVISE_INTERVAL_SECONDS,
    // Cron schedules fire only in processes that run workers.
    schedule: options.schedule ?? false,
    // false (INBOX_MIGRATE_ON_START=false): pg-boss checks its schema instead of installing or
    // upgrading it; `inbox migrate` does that.
    migrate: options.migrate ?? true,
    // Queues created with `notify` wake their workers through LISTEN/NOTIFY the moment a job
    // commits, instead of waiting for the next poll.
    useListenNotify: true,
    // pg-boss's own spans (send, process, settle) join the service's when tracing is on; off,
    // it does not even make no-op spans.
    openTelemetry: { enabled: tracing() !== undefined },
  });
  boss.on('error', (err) => log.error({ err }, 'queue error'));
  await boss.start();
  return boss;
}
