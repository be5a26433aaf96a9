import { fromKysely, type PgBoss } from 'pg-boss';
import { adapterFor } from '../channels/index.js';
import type { SendCredentials, SendOutcome } from '../channels/channel.js';
import { connectionCredentials } from '../connections/connection-credentials.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { publishEvent } from '../realtime/publish.js';
import { findSendContexts, recordSendOutcome } from './replies.queries.js';
import { nextSendAttempt, SEND_RETRY_DELAYS_SECONDS } from './send-policy.js';

export const SEND_QUEUE = 'send-message';
/** A provider that has not answered in this long is a retryable failure (DESIGN "Replies"). */
export const SEND_TIMEOUT_MS = 10_000;

export interface SendJob {
  messageId: number;
  /** 1 for the first try; each retry of a retryable outcome adds one. */
  attempt: number;
}

/** The one way a reply is queued: by the route (with its message row) and for a retry. */
export async function enqueueSend(boss: PgBoss, trx: Executor, job: SendJob, startAfter?: Date): Promise<void> {
  await boss.send(SEND_QUEUE, job, { db: fromKysely(trx as Parameters<typeof fromKysely>[0]), ...(startAfter ? { startAfter } : {}) });
}

/** The first line of an inbound e-mail's text is its subject (see the e-mail channel's normaliser). */
function subjectOf(text: string | null): string | undefined {
  if (!text) return undefined;
  const cut = text.indexOf('\n\n');
  return cut > 0 ? text.slice(0, cut) : undefined;
}

/**
 * Sends one reply and records what came of it. The provider is called outside any
 * transaction (a slow provider must not hold a database connection); its outcome is then
 * written only if the message is still `queued`. A process that dies after the provider
 * answered and before that commit sends the reply again when the job is retried: the one
 * window where a reply can go out twice.
 */
async function sendOne(deps: Deps, job: SendJob): Promise<void> {
  const [ctx] = await findSendContexts(deps.db, [job.messageId]);
  if (!ctx) return; // already sent, failed, or gone: a duplicate job is a no-op
  const adapter = adapterFor(ctx.integration_key);
  const started = performance.now();
  let outcome: SendOutcome;
  if (!adapter?.send) {
    outcome = { outcome: 'failed', error: `${ctx.integration_key} cannot send replies` };
  } else if (!ctx.to) {
    outcome = { outcome: 'failed', error: `the contact has no ${ctx.integration_key} handle to reply to` };
  } else {
    const integration = deps.config.integrations[adapter.key] ?? {};
    const own = (await connectionCredentials(deps, ctx.connection_id)) ?? {};
    // The connection's own credentials first; the integration's settings are the fallback of
    // a deployment with one provider account. The host is always the operator's.
    const credentials: SendCredentials = { accessToken: integration.accessToken, accountSid: integration.accountSid, ...own, apiBaseUrl: integration.apiBaseUrl };
    outcome = await adapter
      .send({ accountId: ctx.external_account_id, to: ctx.to, text: ctx.text, replyTo: { subject: subjectOf(ctx.last_inbound_text), messageId: ctx.last_inbound_external_id ?? undefined } }, credentials, { timeoutMs: SEND_TIMEOUT_MS })
      .catch((err: unknown): SendOutcome => ({ outcome: 'retry', error: `send failed: ${(err as Error).message}` }));
  }
  deps.metrics.sends.inc({ integration: ctx.integration_key, outcome: outcome.outcome });
  deps.metrics.sendDuration.observe({ integration: ctx.integration_key }, (performance.now() - started) / 1000);

  await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    if (outcome.outcome === 'retry') {
      const at = nextSendAttempt(job.attempt, now, outcome.retryAfterSeconds);
      if (at) {
        await enqueueSend(deps.boss, trx, { messageId: job.messageId, attempt: job.attempt + 1 }, at);
        return;
      }
    }
    const row = await recordSendOutcome(
      trx,
      job.messageId,
      outcome.outcome === 'sent'
        ? { status: 'sent', externalId: outcome.externalId }
        : { status: 'failed', error: outcome.outcome === 'retry' ? `gave up after ${SEND_RETRY_DELAYS_SECONDS.length + 1} attempts: ${outcome.error}` : outcome.error },
      now,
    );
    if (row) {
      await publishEvent(trx, {
        type: 'message.updated',
        workspaceId: row.workspace_id,
        data: { id: row.id, threadId: row.thread_id, status: row.status, error: row.error },
      });
    }
  });
}

/**
 * `send-message`: one job per reply attempt. Retries of a provider's answer follow DESIGN's
 * schedule and are new jobs written by the handler; pg-boss's own retry only covers a worker
 * that died holding a job or a database that was away.
 */
export const sendQueue: QueueDefinition<SendJob> = {
  name: SEND_QUEUE,
  options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 120, deleteAfterSeconds: 7 * 24 * 3600, notify: true },
  worker: {
    // Sends are I/O: many at once per worker, each on its own (one slow provider holds only
    // its own job), fetched as soon as they are queued.
    options: { batchSize: 20, pollingIntervalSeconds: 0.5, localConcurrency: 4 },
    async handle(deps, jobs) {
      const results = await Promise.allSettled(jobs.map((job) => sendOne(deps, job.data)));
      const failed = results.find((r) => r.status === 'rejected');
      // A database error: fail the batch so pg-boss retries it; sends already recorded are
      // no-ops on the retry (their messages are no longer queued).
      if (failed) throw (failed as PromiseRejectedResult).reason;
    },
  },
};
