import { pruneUnusedUploads } from '../attachments/unused-uploads.js';
import { pruneAuditLog } from '../audit/audit.queries.js';
import { pruneExpiredExports } from '../exports/exports.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { pruneOldConversations } from './conversation-retention.js';
import { pruneInbox, pruneOutboundEvents } from './inbox-retention.js';
import { pruneExpired } from './maintenance.queries.js';

export const MAINTENANCE_QUEUE = 'maintenance';
/** Every ten minutes; pg-boss's scheduler sends one job per slot however many workers run. */
export const MAINTENANCE_CRON = '*/10 * * * *';

/**
 * Housekeeping: expired auth codes, old login attempts, ended sessions and personal-access
 * tokens, old idempotency keys, live chat visitors whose token ended, inbox rows past their
 * retention (processed ones and dead letters), outbound webhook events past it with their
 * deliveries and attempts, uploads no message used within a day (with their bytes), resolved
 * conversations past their workspace's `conversationRetentionDays` (with their files), and
 * exports past their 24 hours (with their zips).
 */
export const maintenanceQueue: QueueDefinition = {
  name: MAINTENANCE_QUEUE,
  options: { retryLimit: 2, expireInSeconds: 300, deleteAfterSeconds: 24 * 3600 },
  schedule: MAINTENANCE_CRON,
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 30 },
    async handle(deps) {
      const now = deps.now();
      const pruned = await pruneExpired(deps.db, now);
      deps.log.info({ pruned }, 'maintenance: expired rows pruned');
      const inbox = await pruneInbox(deps.db, now, deps.config);
      deps.metrics.inboxRowsDeleted.inc({ status: 'processed' }, inbox.processed);
      deps.metrics.inboxRowsDeleted.inc({ status: 'dead_letter' }, inbox.deadLetter);
      deps.metrics.inboxPartitionsDropped.inc(inbox.partitionsDropped.length);
      deps.log.info(
        {
          inboxRowsDeleted: { processed: inbox.processed, deadLetter: inbox.deadLetter },
          more: inbox.more,
          inboxPartitions: {
            created: inbox.partitionsCreated,
            dropped: inbox.partitionsDropped,
            rowsKept: inbox.rowsKept,
            skipped: inbox.partitionsSkipped,
          },
        },
        inbox.more ? 'maintenance: old inbox rows deleted; more are left for the next run' : 'maintenance: old inbox rows deleted',
      );
      const outbound = await pruneOutboundEvents(deps.db, now, deps.config);
      deps.metrics.outboundEventsDeleted.inc(outbound.deleted);
      // A day is its events' partition with its deliveries' and attempts': counted once.
      deps.metrics.outboundPartitionsDropped.inc(outbound.partitionsDropped.filter((p) => p.startsWith('webhook_events_')).length);
      deps.log.info(
        {
          outboundEventsDeleted: outbound.deleted,
          more: outbound.more,
          outboundPartitions: {
            created: outbound.partitionsCreated,
            dropped: outbound.partitionsDropped,
            rowsKept: outbound.rowsKept,
            skipped: outbound.partitionsSkipped,
          },
        },
        'maintenance: old outbound webhook events deleted',
      );
      const uploads = await pruneUnusedUploads(deps, now);
      deps.log.info({ unusedUploadsDeleted: uploads.deleted, more: uploads.more }, 'maintenance: unused uploads deleted');
      const conversations = await pruneOldConversations(deps, now);
      deps.metrics.conversationsDeleted.inc(conversations.deleted);
      deps.log.info({ conversationsDeleted: conversations.deleted, more: conversations.more }, 'maintenance: old conversations deleted');
      const exports = await pruneExpiredExports(deps, now);
      deps.log.info({ exportsDeleted: exports.deleted }, 'maintenance: expired exports deleted');
      const audit = await pruneAuditLog(deps.db, deps.config.auditRetentionDays, now);
      deps.log.info({ auditEntriesDeleted: audit.deleted, more: audit.more }, 'maintenance: old audit log entries deleted');
    },
  },
};
