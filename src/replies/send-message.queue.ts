import { attachmentsOf } from '../attachments/attachments.queries.js';
import { type ChannelAdapter, type OutboundAttachment, type SendOutcome, storableText } from '../channels/channel.js';
import { sendersWith } from '../channels/index.js';
import {
  CREDENTIALS_DO_NOT_OPEN,
  connectionCredentials,
  lacksCredentials,
  NO_CREDENTIALS,
  providerCredentials,
} from '../connections/connection-credentials.js';
import { recordSendErrors } from '../connections/connection-health.queries.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import { isValueRefused } from '../db/database.js';
import type { EmailHeaders } from '../db/types.js';
import type { Deps } from '../deps.js';
import { defaultQueueOptions, type QueueDefinition } from '../jobs/queue.js';
import { announce } from '../messaging/announce.js';
import { takeEarlyReceipts } from '../messaging/early-receipts.js';
import { truncate } from '../text/truncate.js';
import { wellFormed } from '../text/well-formed.js';
import { inSpan, tracing } from '../tracing/tracing.js';
import { MissingBytesError, outboundAttachments } from './outbound-attachments.js';
import { addRecipientHandles, findSendContexts, type SendResult } from './replies.queries.js';
import { claimSends, holdClaims, SEND_CLAIM_MARGIN_MS, settleClaims } from './send-claim.js';
import { enqueueSend, SEND_QUEUE, type SendJob } from './send-message.enqueue.js';
import { nextSendAttempt, SEND_RETRY_DELAYS_SECONDS } from './send-policy.js';

/** A provider that has not answered in this long is a retryable failure (docs/replies.md). */
export const SEND_TIMEOUT_MS = 10_000;
/** A send claimed longer ago than this was abandoned (its process died mid-send) and may be taken over. */
export const SEND_CLAIM_STALE_MS = SEND_TIMEOUT_MS + SEND_CLAIM_MARGIN_MS;
/** How often a live sender marks its claims as still held (well inside the stale time). */
export const SEND_CLAIM_REFRESH_MS = 5_000;

/** How long an unrefreshed claim lasts, and how often a live sender refreshes its own. */
export interface ClaimTiming {
  staleAfterMs: number;
  refreshMs: number;
}
const CLAIM_TIMING: ClaimTiming = { staleAfterMs: SEND_CLAIM_STALE_MS, refreshMs: SEND_CLAIM_REFRESH_MS };

/**
 * The mail a reply answers: its subject and the ids to name (docs/email.md, "Replies"). A mail
 * stored before messages kept their headers led its text with the subject and a blank line.
 */
function replyToOf(ctx: {
  last_inbound_text: string | null;
  last_inbound_external_id: string | null;
  last_inbound_email: EmailHeaders | null;
}) {
  const email = ctx.last_inbound_email;
  if (email) return { subject: email.subject ?? undefined, messageId: email.messageId, references: email.references ?? [] };
  const text = ctx.last_inbound_text;
  const cut = text ? text.indexOf('\n\n') : -1;
  return { subject: cut > 0 ? text!.slice(0, cut) : undefined, messageId: ctx.last_inbound_external_id ?? undefined };
}

type SendContext = Awaited<ReturnType<typeof findSendContexts>>[number];

/** A reply still queued (or to be retried) when its connection was deleted fails, unsent. */
const CONNECTION_DELETED = "this thread's connection was deleted";

/** Calls the provider for one reply; never throws (an unexpected error is a retryable outcome). */
async function sendOne(
  deps: Deps,
  ctx: SendContext,
  senderOf: (key: string) => ChannelAdapter | undefined,
  credentialsOf: (connectionId: number) => Promise<Record<string, string> | null>,
  attachments: OutboundAttachment[],
): Promise<SendOutcome> {
  const adapter = senderOf(ctx.integration_key);
  const started = performance.now();
  let outcome: SendOutcome;
  if (ctx.connection_deleted) {
    outcome = { outcome: 'failed', error: CONNECTION_DELETED };
  } else if (!adapter?.send) {
    outcome = { outcome: 'failed', error: `${ctx.integration_key} cannot send replies` };
  } else if (!ctx.to) {
    outcome = { outcome: 'failed', error: `the contact has no ${ctx.integration_key} handle to reply to` };
  } else {
    const integration = deps.config.integrations[adapter.key] ?? {};
    outcome = await credentialsOf(ctx.connection_id)
      .then((own): Promise<SendOutcome> | SendOutcome => {
        // A workspace's connection never borrows the operator's account: without its own
        // credentials no attempt can succeed, so the message fails now, unsent.
        if (lacksCredentials(ctx.integration_key, ctx.managed_by, own)) return { outcome: 'failed', error: NO_CREDENTIALS };
        const credentials = providerCredentials(integration, ctx.managed_by, own);
        const replyTo = replyToOf(ctx);
        const target = {
          accountId: ctx.external_account_id,
          to: ctx.to!,
          text: ctx.text,
          ...(ctx.template == null ? {} : { template: ctx.template }),
          messageId: ctx.id,
          replyTo,
          ...(ctx.email ? { email: ctx.email } : {}),
          ...(ctx.automation ? { automatic: true } : {}),
          lastInboundAt: ctx.last_inbound_at,
          ...(attachments.length > 0 ? { attachments } : {}),
        };
        return adapter.send!(target, credentials, {
          timeoutMs: SEND_TIMEOUT_MS,
          smtp: { allowPrivate: deps.config.allowPrivateSmtp, resolve: deps.resolveHost },
          publicUrl: deps.config.publicUrl,
          now: deps.now,
        });
      })
      .catch(
        (err: unknown): SendOutcome =>
          // Credentials that do not open will not open on a retry either: the message fails now
          // and says what to do; the process and the batch's other replies go on.
          err instanceof SecretBoxError
            ? { outcome: 'failed', error: CREDENTIALS_DO_NOT_OPEN }
            : err instanceof MissingBytesError
              ? { outcome: 'failed', error: err.message }
              : { outcome: 'retry', error: `send failed: ${(err as Error).message}` },
      );
  }
  deps.metrics.sends.inc({ integration: ctx.integration_key, outcome: outcome.outcome });
  deps.metrics.sendDuration.observe({ integration: ctx.integration_key }, (performance.now() - started) / 1000);
  return outcome;
}

/** A send's outcome; `unstored` says why the provider's answer itself could not be recorded. */
interface BatchOutcome {
  job: SendJob;
  outcome: SendOutcome;
  unstored?: string;
}

/**
 * Records a batch's outcomes in one transaction (see sendBatch). When PostgreSQL refuses a
 * value of it (isValueRefused: a provider's id another message already has, one too long for
 * its index, anything no boundary cleaned), the outcomes are recorded one by one and the one
 * refused alone is recorded without the provider's values: sent without its id, or failed with
 * the reason. The batch's other replies are recorded once and none is sent again. A database
 * that is away still fails the batch, for pg-boss to retry.
 */
async function recordSends(
  deps: Deps,
  token: string,
  contexts: Map<number, SendContext>,
  stored: ReadonlyMap<number, unknown>,
  outcomes: BatchOutcome[],
): Promise<void> {
  try {
    await recordBatch(deps, token, contexts, stored, outcomes);
    return;
  } catch (err) {
    if (!isValueRefused(err)) throw err;
    if (outcomes.length > 1) deps.log.warn({ err }, "a send batch's outcomes were refused together; recording them one by one");
  }
  for (const o of outcomes) {
    try {
      await recordBatch(deps, token, contexts, stored, [o]);
    } catch (err) {
      if (!isValueRefused(err)) throw err;
      const reason = truncate(storableText(wellFormed((err as Error).message)), 300);
      deps.log.warn(
        { err, messageId: o.job.messageId },
        "a reply send's outcome could not be stored; recorded without the provider's answer",
      );
      const unstored =
        o.outcome.outcome === 'sent'
          ? `sent, but the provider's message id could not be stored (${reason}): receipts will not update this message`
          : `the provider's answer could not be stored (${reason}): not sent again`;
      await recordBatch(deps, token, contexts, stored, [{ ...o, unstored }]);
    }
  }
}

/** Records `batch`'s outcomes in one transaction: messages, retries, connection health, receipts, events. */
async function recordBatch(
  deps: Deps,
  token: string,
  contexts: Map<number, SendContext>,
  stored: ReadonlyMap<number, unknown>,
  batch: BatchOutcome[],
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const results: SendResult[] = [];
    const retries: { job: SendJob; at: Date }[] = [];
    const learned: Parameters<typeof addRecipientHandles>[1][number][] = [];
    for (const { job, outcome, unstored } of batch) {
      if (unstored !== undefined) {
        // The provider's answer could not be stored: a sent reply stays sent (without the
        // id), anything else fails with the reason; neither is ever sent again.
        results.push(
          outcome.outcome === 'sent'
            ? { id: job.messageId, status: 'sent', externalId: null, error: unstored }
            : { id: job.messageId, status: 'failed', error: unstored },
        );
        continue;
      }
      if (outcome.outcome === 'sent') {
        results.push({ id: job.messageId, status: 'sent', externalId: outcome.externalId });
        // The provider knows the recipient by another id (WhatsApp's wa_id): their answers come from it.
        const ctx = contexts.get(job.messageId)!;
        if (outcome.recipientId && outcome.recipientId !== ctx.to)
          learned.push({
            workspaceId: ctx.workspace_id,
            threadId: ctx.thread_id,
            integrationKey: ctx.integration_key,
            externalId: outcome.recipientId,
          });
        continue;
      }
      const at = outcome.outcome === 'retry' ? nextSendAttempt(job.attempt, now, outcome.retryAfterSeconds) : null;
      // A timeout may hide a send the provider took: the next attempt can deliver it again.
      if (outcome.outcome === 'retry')
        deps.log.info({ messageId: job.messageId, attempt: job.attempt, error: outcome.error }, 'reply send to be retried');
      if (at) retries.push({ job: { ...job, attempt: job.attempt + 1 }, at });
      else {
        const error =
          outcome.outcome === 'retry' ? `gave up after ${SEND_RETRY_DELAYS_SECONDS.length + 1} attempts: ${outcome.error}` : outcome.error;
        results.push({ id: job.messageId, status: 'failed', error });
      }
    }
    const failures = results.flatMap((r) =>
      r.status === 'failed' ? [{ connectionId: contexts.get(r.id)!.connection_id, error: r.error }] : [],
    );
    await recordSendErrors(trx, failures, now);
    await addRecipientHandles(trx, learned);
    const { changed, released } = await settleClaims(
      trx,
      token,
      results,
      retries.map((r) => r.job.messageId),
      now,
    );
    for (const r of retries) if (released.has(r.job.messageId)) await enqueueSend(deps.boss, trx, r.job, r.at);
    // Receipts the providers sent while this batch waited for its slowest send.
    const latest = new Map(changed.map((m) => [m.id, m]));
    const received = await takeEarlyReceipts(
      trx,
      changed.flatMap((m) => {
        if (m.status !== 'sent' || m.external_id === null) return [];
        const ctx = contexts.get(m.id)!;
        return [
          {
            connectionId: m.connection_id,
            integrationKey: ctx.integration_key,
            account: ctx.external_account_id,
            externalId: m.external_id,
          },
        ];
      }),
      now,
    );
    for (const m of received) latest.set(m.id, m);
    // The batch read its messages' attachments above; those without any are not read again.
    await announce(
      deps,
      trx,
      [...latest.values()].map((message) => ({ type: 'message.updated' as const, message })),
      now,
      { bare: new Set(batch.flatMap(({ job }) => (stored.has(job.messageId) ? [] : [job.messageId]))) },
    );
  });
}

/**
 * Sends a batch of replies at once (a provider that hangs holds its batch's commit until the
 * 10 s timeout; the worker's other batches go on), then records every outcome in one
 * transaction: `sent` with the provider's id, `failed` with its
 * error, or the next attempt scheduled. One commit per batch instead of one per reply keeps
 * the database out of the way of a busy sender (each commit that notifies the realtime bus
 * waits for the one before it). Only sends this execution claimed are made, and an outcome
 * is written only where its claim still stands (see send-claim.ts). A value PostgreSQL refuses
 * fails only its own reply's record, never the batch's (recordSends). A process that dies after
 * a provider answered and before that commit sends the reply again once its claim is stale:
 * the one window in which a reply can go out twice.
 */
export async function sendBatch(deps: Deps, jobs: SendJob[], timing: ClaimTiming = CLAIM_TIMING): Promise<void> {
  const claim = await claimSends(deps, jobs, {
    staleAfterMs: timing.staleAfterMs,
    recheck: (job, at) => enqueueSend(deps.boss, deps.db, job, at),
  });
  if (claim.jobs.length === 0) return;
  // While these sends are in flight their claims stay fresh, so a slow but live sender is
  // never taken for dead and its replies are never sent a second time by another attempt.
  const release = holdClaims(deps, claim.token, timing.refreshMs);
  try {
    // One read for the claimed messages; one no longer queued (sent, failed, gone) has no context.
    const contexts = new Map(
      (
        await findSendContexts(
          deps.db,
          claim.jobs.map((j) => j.messageId),
        )
      ).map((c) => [c.id, c]),
    );
    const unique = claim.jobs.filter((j) => contexts.has(j.messageId));
    if (unique.length === 0) return;
    // A connection's credentials are opened once per batch, whatever the number of its replies.
    const opened = new Map<number, Promise<Record<string, string> | null>>();
    const credentialsOf = (id: number) => {
      let p = opened.get(id);
      if (!p) {
        p = connectionCredentials(deps, id);
        opened.set(id, p);
      }
      return p;
    };
    const senderOf = sendersWith(deps);
    // One read for the batch's attachments too, of the replies that have any (most have none).
    const stored = await attachmentsOf(
      deps.db,
      unique.flatMap((j) => (contexts.get(j.messageId)!.has_attachments ? [j.messageId] : [])),
    );
    const files = new Map([...stored].map(([messageId, rows]) => [messageId, outboundAttachments(deps, rows)]));
    const outcomes = await Promise.all(
      unique.map(async (job) => {
        const ctx = contexts.get(job.messageId)!;
        const send = () => sendOne(deps, ctx, senderOf, credentialsOf, files.get(job.messageId) ?? []);
        // Each reply's provider call continues the trace that queued it.
        const outcome = tracing()
          ? await inSpan(
              `send ${ctx.integration_key}`,
              [job.traceparent],
              { 'inbox.message_id': job.messageId, 'inbox.attempt': job.attempt },
              send,
            )
          : await send();
        return { job, outcome };
      }),
    );

    await recordSends(deps, claim.token, contexts, stored, outcomes);
  } finally {
    release();
  }
}

/**
 * `send-message`: one job per reply attempt. Retries of a provider's answer follow the
 * schedule of docs/replies.md and are new jobs written by the handler; pg-boss's own retry only covers a worker
 * that died holding a job (its heartbeat stops) or a database that was away: from 1 s, so a
 * dead worker's replies go out again at once, to 5 min, over 12 tries (about 25 minutes).
 */
export const sendQueue: QueueDefinition<SendJob> = {
  name: SEND_QUEUE,
  options: { ...defaultQueueOptions, notify: true },
  worker: {
    // Sends are I/O: batches of 50 sent at once, four batches in flight per worker, fetched
    // as soon as they are queued; retries and the jobs of a worker that died, which no NOTIFY
    // announces, within 2 s of becoming due.
    options: { batchSize: 50, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 2, burstWhenBatchFull: true, localConcurrency: 4 },
    async handle(deps, jobs) {
      // A database error fails the batch so pg-boss retries it; replies whose outcome was
      // recorded are no longer queued and are not sent again.
      await sendBatch(
        deps,
        jobs.map((j) => j.data),
      );
    },
  },
};
