import type { Deps } from '../deps.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { idleRules, lockIdleRule, moveIdleCutoff, startedByAutomation, threadsGoneIdle } from './automation-rules.queries.js';
import { runRules } from './run-rules.js';

export const AUTOMATION_IDLE_QUEUE = 'automation-idle';
/** Every minute; pg-boss's scheduler sends one job per slot however many workers run. */
export const AUTOMATION_IDLE_CRON = '* * * * *';
/** Threads one rule's check takes per transaction; a longer backlog takes more rounds of the same job. */
export const IDLE_BATCH = 200;

const MINUTE = 60_000;
/** Past every thread id: the window up to `until` is done, a thread whose last message is at `until` included. */
const DONE = Number.MAX_SAFE_INTEGER;

/**
 * The `thread.idle` check (docs/automation.md). Each rule keeps a cutoff: the last message
 * time (and thread id) it has looked at. A run reads, by threads_workspace_idx, the threads whose
 * last message fell after the cutoff and at least `idleMinutes` ago, fires the rule for those in
 * one of its `statuses`, and moves the cutoff past them. So a thread fires once per idle stretch:
 * a new message moves its last message time ahead of the cutoff, and it fires again only once
 * that one is `idleMinutes` old; a stretch that only the service's own message started (the
 * rule's reply) does not fire. Answers how many threads fired.
 */
export async function checkIdleThreads(deps: Deps): Promise<number> {
  let fired = 0;
  for (const { id } of await idleRules(deps.db)) {
    for (;;) {
      const round = await deps.db.transaction().execute(async (trx) => {
        const rule = await lockIdleRule(trx, id);
        if (!rule || rule.idle_minutes === null) return null;
        const now = deps.now();
        const until = new Date(now.getTime() - rule.idle_minutes * MINUTE);
        const after = { at: rule.idle_cutoff_at ?? until, id: rule.idle_cutoff_id ?? DONE };
        const threads = await threadsGoneIdle(trx, rule.workspace_id, after, until, IDLE_BATCH);
        const statuses = new Set<string>(rule.statuses ?? []);
        // A stretch the service's own message started (this rule's reply) is no new silence.
        const inStatus = threads.filter((t) => statuses.has(t.status));
        const automated = await startedByAutomation(trx, inStatus, rule.idle_minutes);
        const idle = inStatus.filter((t) => !automated.has(t.id));
        await runRules(
          deps,
          trx,
          idle.map((t) => ({ event: 'thread.idle' as const, workspaceId: rule.workspace_id, threadId: t.id, text: null })),
          now,
          { ruleId: rule.id },
        );
        const last = threads.at(-1);
        const full = threads.length === IDLE_BATCH;
        await moveIdleCutoff(trx, rule.id, full ? last!.last_message_at : until, full ? last!.id : DONE);
        return { fired: idle.length, full };
      });
      if (!round) break;
      fired += round.fired;
      if (!round.full) break;
    }
  }
  return fired;
}

export const automationIdleQueue: QueueDefinition = {
  name: AUTOMATION_IDLE_QUEUE,
  options: { retryLimit: 2, expireInSeconds: 300, deleteAfterSeconds: 3600 },
  schedule: AUTOMATION_IDLE_CRON,
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 10 },
    async handle(deps) {
      const fired = await checkIdleThreads(deps);
      if (fired > 0) deps.log.info({ fired }, 'automation: idle threads fired their rules');
    },
  },
};
