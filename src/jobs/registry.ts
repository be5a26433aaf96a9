import type { PgBoss } from 'pg-boss';
import { fetchMediaQueue } from '../attachments/fetch-media.queue.js';
import { automationIdleQueue } from '../automation/idle.queue.js';
import { syncTemplatesQueue } from '../connections/sync-templates.queue.js';
import { contactErasureQueue } from '../contacts/erasure.js';
import type { Deps } from '../deps.js';
import { exportQueue } from '../exports/exports.js';
import { type MailboxReaderOptions, MailboxReaders } from '../mailboxes/mailbox-readers.js';
import { maintenanceQueue } from '../maintenance/maintenance.queue.js';
import { notificationMailQueue } from '../notifications/notification-mail.queue.js';
import { sendQueue } from '../replies/send-message.queue.js';
import { slaClockQueue } from '../sla/sla-clock.queue.js';
import { SearchIndexer } from '../threads/search-index.js';
import { snoozeQueue } from '../threads/snooze.queue.js';
import { userOfflineQueue } from '../users/presence.js';
import { webhookQueue } from '../webhooks-in/inbox.queue.js';
import { Dispatcher } from '../webhooks-out/dispatcher.js';
import { outboundQueue } from '../webhooks-out/outbound.queue.js';
import { PlannerStats } from './planner-stats.js';
import type { QueueDefinition, WorkerContext } from './queue.js';

/** Every queue of the service. Features add theirs here; this is the one list. */
// biome-ignore lint/suspicious/noExplicitAny: one list of queues whose payloads differ; each handler types its own
export const queues: QueueDefinition<any>[] = [
  webhookQueue,
  sendQueue,
  outboundQueue,
  maintenanceQueue,
  snoozeQueue,
  syncTemplatesQueue,
  fetchMediaQueue,
  userOfflineQueue,
  notificationMailQueue,
  slaClockQueue,
  contactErasureQueue,
  exportQueue,
  automationIdleQueue,
];

/**
 * Creates every queue, and brings the options of one that exists already to what its
 * definition says: pg-boss's createQueue leaves an existing queue as it was, so a database
 * made by an older version would otherwise keep, say, no heartbeat.
 */
export async function createQueues(boss: PgBoss): Promise<void> {
  for (const q of queues) {
    await boss.createQueue(q.name, q.options);
    const { policy: _policy, partition: _partition, ...updatable } = q.options;
    await boss.updateQueue(q.name, updatable);
  }
}

/** The workers a process started: the queues they serve, and how to stop them. */
export interface RunningWorkers {
  queues: string[];
  /** Stops taking jobs and waits for the ones in hand. */
  stop(): Promise<void>;
}

/**
 * Starts a worker for every queue that has one. A fetch that comes back full means a
 * backlog, and has the queue's job table analyzed if its statistics are stale (see
 * PlannerStats). `context` is what the handlers get besides the deps (WorkerContext); `mailboxes`
 * is how this process reads `email.imap` mailboxes (false: none).
 */
export async function startWorkers(
  deps: Deps,
  { mailboxes: mailboxOptions, ...context }: WorkerContext & { mailboxes?: MailboxReaderOptions | false } = {},
): Promise<RunningWorkers> {
  const started: string[] = [];
  const stats = new PlannerStats(deps);
  const searchIndex = new SearchIndexer(deps);
  const handed: WorkerContext = { ...context, searchIndex };
  for (const q of queues) {
    if (!q.worker) continue;
    const { handle, options } = q.worker;
    const full = options.batchSize ?? 1;
    await deps.boss.work(q.name, options, (jobs) => {
      if (jobs.length >= full && full > 1) stats.refreshSoon(q.name);
      return handle(deps, jobs as { id: string; data: object }[], handed);
    });
    // With `{}` as its jobs' data: without, pg-boss sends them null, which no handler expects.
    if (q.schedule) await deps.boss.schedule(q.name, q.schedule, {});
    started.push(q.name);
  }
  // Outbound webhooks are sent job by job rather than in work() batches (see Dispatcher).
  const dispatcher = new Dispatcher(deps);
  dispatcher.start();
  started.push(outboundQueue.name);
  searchIndex.start();
  const mailboxes = mailboxOptions === false ? undefined : new MailboxReaders(deps, mailboxOptions);
  mailboxes?.start();
  return {
    queues: started,
    async stop() {
      for (const q of queues) if (q.worker) await deps.boss.offWork(q.name, { wait: true });
      await mailboxes?.stop();
      await dispatcher.stop();
      await searchIndex.stop();
      await stats.settled();
    },
  };
}
