import type { QueueDefinition } from '../jobs/registry.js';
import { pruneExpired } from './maintenance.queries.js';

export const MAINTENANCE_QUEUE = 'maintenance';
/** Every ten minutes; pg-boss's scheduler sends one job per slot however many workers run. */
export const MAINTENANCE_CRON = '*/10 * * * *';

/** Housekeeping: expired auth codes, old login attempts, ended sessions and tokens, old idempotency keys. */
export const maintenanceQueue: QueueDefinition = {
  name: MAINTENANCE_QUEUE,
  options: { retryLimit: 2, expireInSeconds: 300, deleteAfterSeconds: 24 * 3600 },
  schedule: MAINTENANCE_CRON,
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 30 },
    async handle(deps) {
      const pruned = await pruneExpired(deps.db, deps.now());
      deps.log.info({ pruned }, 'maintenance: expired rows pruned');
    },
  },
};
