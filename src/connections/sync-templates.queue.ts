import type { PgBoss } from 'pg-boss';
import { storableText } from '../channels/channel.js';
import { META_GRAPH_API } from '../channels/provider-http.js';
import { fetchWhatsappTemplates } from '../channels/whatsapp-templates.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import { type Executor, isValueRefused } from '../db/database.js';
import type { Deps } from '../deps.js';
import { defaultQueueOptions, jobsIn, type QueueDefinition } from '../jobs/queue.js';
import { wellFormed } from '../text/well-formed.js';
import {
  CREDENTIALS_DO_NOT_OPEN,
  connectionCredentials,
  lacksCredentials,
  NO_CREDENTIALS,
  providerCredentials,
} from './connection-credentials.js';
import { findConnection } from './connections.queries.js';
import { componentText, countParameters } from './template-parameters.js';
import { replaceTemplates, setTemplatesSync, setTemplatesSynced, type TemplateRow } from './templates.queries.js';

export const SYNC_TEMPLATES_QUEUE = 'sync-templates';
/** A provider that has not answered a page in this long fails the sync. */
const SYNC_PAGE_TIMEOUT_MS = 10_000;

/** Which connection to sync; the credentials are opened by the worker, never carried in a job. */
export interface SyncTemplatesJob {
  workspaceId: number;
  connectionId: number;
}

/**
 * The one way a sync is queued, in the caller's transaction. The queue is `stately` with the
 * connection as its key: at most one sync of a connection waits while another runs, so a
 * burst of POSTs costs at most two reads of the provider's list, and the last one still
 * starts after every change the burst may have been about.
 */
export async function enqueueTemplateSync(boss: PgBoss, trx: Executor, job: SyncTemplatesJob): Promise<void> {
  await boss.send(SYNC_TEMPLATES_QUEUE, job, { db: jobsIn(trx), singletonKey: String(job.connectionId) });
}

/** Why a sync cannot even ask the provider, or what it needs to. */
async function syncSource(deps: Deps, job: SyncTemplatesJob) {
  const connection = await findConnection(deps.db, job.workspaceId, job.connectionId);
  if (!connection) return undefined;
  if (!connection.business_account_id) return { error: 'the connection has no businessAccountId' };
  const integration = deps.config.integrations.whatsapp ?? {};
  let own: Record<string, string> | null;
  try {
    own = await connectionCredentials(deps, job.connectionId);
  } catch (err) {
    if (err instanceof SecretBoxError) return { error: CREDENTIALS_DO_NOT_OPEN };
    throw err;
  }
  if (lacksCredentials('whatsapp', connection.managed_by, own)) return { error: NO_CREDENTIALS };
  const { accessToken } = providerCredentials(integration, connection.managed_by, own);
  if (!accessToken) return { error: 'the connection has no accessToken (and INBOX_INTEGRATIONS.whatsapp has none)' };
  return { wabaId: connection.business_account_id, accessToken, apiBaseUrl: integration.apiBaseUrl ?? META_GRAPH_API };
}

/**
 * Reads every page of the connection's templates and replaces its list in one transaction.
 * A provider's refusal (401, 500, a paging link that leaves its host) keeps the previous list
 * and records the error on the connection; the job itself ends, since asking again at once
 * would get the same answer (docs/replies.md, "Templates").
 */
export async function syncTemplates(deps: Deps, job: SyncTemplatesJob): Promise<void> {
  const source = await syncSource(deps, job);
  if (!source) return; // the connection is gone
  let rows: TemplateRow[];
  try {
    if ('error' in source) throw new Error(source.error);
    const listed = await fetchWhatsappTemplates({ ...source, timeoutMs: SYNC_PAGE_TIMEOUT_MS });
    const unique = new Map(listed.map((t) => [`${t.name}\u0000${t.language}`, t]));
    rows = [...unique.values()].map((t) => ({ ...t, parameterCount: countParameters(componentText(t.components, 'BODY')) }));
  } catch (err) {
    const error = (err as Error).message;
    deps.log.warn({ connectionId: job.connectionId, error }, 'template sync failed; the previous list is kept');
    await setTemplatesSync(deps.db, job.connectionId, 'failed', deps.now(), error);
    return;
  }
  // The connection's row is updated first: its lock makes two syncs that finish together
  // replace the list one after the other instead of colliding on the same keys. A list read
  // from a WABA the connection stopped naming meanwhile (a PATCH of businessAccountId) is dropped.
  try {
    await deps.db.transaction().execute(async (trx) => {
      if (await setTemplatesSynced(trx, job.connectionId, source.wabaId, deps.now())) await replaceTemplates(trx, job.connectionId, rows);
    });
  } catch (err) {
    // A value PostgreSQL refuses (a name too long to index) would refuse every retry the same
    // way and leave the sync `running`: it fails, with the reason, and the previous list stays.
    if (!isValueRefused(err)) throw err;
    const error = `the provider's list could not be stored: ${storableText(wellFormed((err as Error).message))}`;
    deps.log.warn({ connectionId: job.connectionId, error }, 'template sync failed; the previous list is kept');
    await setTemplatesSync(deps.db, job.connectionId, 'failed', deps.now(), error);
  }
}

/**
 * `sync-templates`: one job per requested sync, at most one waiting and one running per
 * connection. pg-boss retries only what the handler did not finish (the database away, a
 * worker that died: its heartbeat stops); the provider's answers are recorded, not retried.
 */
export const syncTemplatesQueue: QueueDefinition<SyncTemplatesJob> = {
  name: SYNC_TEMPLATES_QUEUE,
  options: { ...defaultQueueOptions, policy: 'stately', retryLimit: 5, retryDelay: 5, expireInSeconds: 600, notify: true },
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 2, localConcurrency: 2 },
    async handle(deps, jobs) {
      for (const job of jobs) await syncTemplates(deps, job.data);
    },
  },
};
