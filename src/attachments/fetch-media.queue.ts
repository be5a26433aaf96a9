import type { IntegrationKey } from '../config.js';
import { CREDENTIALS_DO_NOT_OPEN, connectionCredentials, providerCredentials } from '../connections/connection-credentials.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import type { Deps } from '../deps.js';
import { defaultQueueOptions, type QueueDefinition } from '../jobs/queue.js';
import { announce } from '../messaging/announce.js';
import { systemResolve } from '../net/address-guard.js';
import { contentTypeOf, OCTET_STREAM, SNIFF_BYTES } from './content-type.js';
import { enqueueFetchMedia, FETCH_MEDIA_QUEUE, type FetchMediaJob } from './fetch-media.enqueue.js';
import { countAttempt, findDeliveryBody, findFetchable, type StoredSource, settleAttachment, storedUnder } from './fetch-media.queries.js';
import { MediaClient, MediaFetchError } from './media-download.js';
import { openMedia } from './media-sources.js';
import { StorageUnavailableError, TooLargeError } from './storage.js';

/** Delays before the second, third and fourth download; after the fourth fails, the attachment does. */
export const MEDIA_RETRY_DELAYS_SECONDS = [60, 5 * 60, 15 * 60] as const;
/** Connecting, a provider's first answer, and every pause while reading the bytes. */
export const MEDIA_TIMEOUT_MS = 30_000;
/** How many bytes file-type reads to know a type (its own recommended sample). */

export interface FetchOptions {
  timeoutMs: number;
}

/** Where an attachment's bytes are kept in the storage: one key per attachment, so a retry overwrites what an attempt left. */
export const attachmentStorageKey = (attachmentId: number) => `attachments/${attachmentId}`;

/**
 * Downloads one pending attachment and settles it (docs/attachments.md, "Inbound"): `stored`
 * with its size and the type its bytes show (file-type; the declared type when the bytes say
 * nothing), or, once the retries are spent or retrying cannot help, `failed` with the
 * reason. Either way the message is announced (`message.updated`). The message and its text
 * were committed before this job ran and never depend on it.
 */
export async function fetchMedia(deps: Deps, client: MediaClient, job: FetchMediaJob): Promise<void> {
  const row = await findFetchable(deps.db, job.attachmentId);
  if (row?.status !== 'pending') return; // settled by an earlier attempt, or gone with its message
  const key = attachmentStorageKey(row.id);
  let outcome: { size: number; contentType: string } | { error: string; retry: boolean };
  try {
    const integration = deps.config.integrations[row.integration_key as IntegrationKey] ?? {};
    const opened = await openMedia(row.source as StoredSource, {
      client,
      integrationKey: row.integration_key,
      credentials: providerCredentials(integration, row.managed_by, await connectionCredentials(deps, row.connection_id)),
      maxBytes: deps.config.maxAttachmentBytes,
      messageExternalId: row.message_external_id ?? '',
      deliveryBody: (id) => findDeliveryBody(deps.db, id),
    });
    try {
      // What an earlier attempt may have left under the key (a process that died mid-write).
      await deps.storage.delete(key);
      const declared = row.content_type !== OCTET_STREAM ? row.content_type : opened.contentType;
      outcome = await storeTyped(deps, key, opened.body, declared);
    } finally {
      opened.body.destroy();
    }
  } catch (err) {
    outcome = failure(err);
  }

  const attempts = job.attempt;
  if ('size' in outcome) {
    const { size, contentType } = outcome;
    const settled = await deps.db.transaction().execute(async (trx) => {
      const now = deps.now();
      const message = await settleAttachment(trx, row.id, { status: 'stored', size, contentType, storageKey: key, attempts }, now);
      if (message) await announce(deps, trx, [{ type: 'message.updated', message }], now);
      return message !== undefined;
    });
    // The row went while the file was downloaded (an erasure, a conversation deleted): nothing
    // will ever name or remove these bytes, so they go now. Another attempt that stored the
    // same key first keeps them.
    if (!settled && !(await storedUnder(deps.db, row.id, key))) await deps.storage.delete(key).catch(() => {});
    return;
  }
  const delay = outcome.retry ? MEDIA_RETRY_DELAYS_SECONDS[attempts - 1] : undefined;
  const { error } = outcome;
  await deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    if (delay !== undefined) {
      deps.log.info({ attachmentId: row.id, attempt: attempts, error }, 'media download to be retried');
      await countAttempt(trx, row.id, attempts, now);
      await enqueueFetchMedia(deps.boss, trx, [{ attachmentId: row.id, attempt: attempts + 1 }], {
        startAfter: new Date(now.getTime() + delay * 1000),
      });
      return;
    }
    const final = outcome.retry ? `gave up after ${attempts} attempts: ${error}` : error;
    const message = await settleAttachment(trx, row.id, { status: 'failed', error: final, attempts }, now);
    if (message) await announce(deps, trx, [{ type: 'message.updated', message }], now);
  });
  await deps.storage.delete(key).catch(() => {});
}

function failure(err: unknown): { error: string; retry: boolean } {
  if (err instanceof MediaFetchError) return { error: err.message, retry: err.retry };
  // The connection's sealed credentials do not open: no later attempt opens them either.
  if (err instanceof SecretBoxError) return { error: CREDENTIALS_DO_NOT_OPEN, retry: false };
  if (err instanceof TooLargeError) return { error: `too large: more than ${err.maxBytes} bytes`, retry: false };
  if (err instanceof StorageUnavailableError) return { error: `storage unavailable: ${err.message}`, retry: true };
  const e = err as { code?: string; name?: string };
  // A stream that broke off mid-body (the provider went away) is worth another try.
  return { error: `download failed: ${e.code ?? e.name ?? 'unknown error'}`, retry: true };
}

/**
 * Streams `body` into the storage, never holding more than its first few kilobytes: those
 * are read first, to learn the type from the bytes, and then handed on with the rest.
 */
async function storeTyped(
  deps: Deps,
  key: string,
  body: AsyncIterable<Uint8Array>,
  declared: string | undefined,
): Promise<{ size: number; contentType: string }> {
  const it = body[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let ended = false;
  while (headBytes < SNIFF_BYTES) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    headBytes += next.value.byteLength;
  }
  const contentType = await contentTypeOf(Buffer.concat(head), declared);
  async function* all(): AsyncGenerator<Uint8Array> {
    try {
      yield* head;
      if (ended) return;
      for (;;) {
        const next = await it.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      // The storage stopped reading (the limit, an error): stop the download too.
      if (!ended) await it.return?.();
    }
  }
  const { size } = await deps.storage.put(key, all(), { maxBytes: deps.config.maxAttachmentBytes });
  return { size, contentType };
}

/** A MediaClient for one batch: the address guard lifted only as INBOX_ALLOW_PRIVATE_WEBHOOK_URLS says. */
export function mediaClient(deps: Deps, options: FetchOptions = { timeoutMs: MEDIA_TIMEOUT_MS }): MediaClient {
  return new MediaClient({
    allowPrivate: deps.config.allowPrivateWebhookUrls,
    resolve: deps.resolveHost ?? systemResolve,
    timeoutMs: options.timeoutMs,
    maxBytes: deps.config.maxAttachmentBytes,
  });
}

/**
 * `fetch-media`: one job per inbound attachment and attempt. Retries of a download are new
 * jobs the handler writes (MEDIA_RETRY_DELAYS_SECONDS); pg-boss's own retry covers a worker
 * that died holding a job, whose attachment is still `pending` and is downloaded again.
 */
export const fetchMediaQueue: QueueDefinition<FetchMediaJob> = {
  name: FETCH_MEDIA_QUEUE,
  options: {
    ...defaultQueueOptions,
    retryLimit: 5,
    retryDelay: 5,
    // A 25 MB file over a slow link; the heartbeat, not this, notices a dead worker.
    expireInSeconds: 30 * 60,
    notify: true,
  },
  worker: {
    // Downloads are I/O: a batch's files are fetched at once, two batches in flight.
    options: { batchSize: 4, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 2, localConcurrency: 2 },
    async handle(deps, jobs) {
      const client = mediaClient(deps);
      try {
        await Promise.all(jobs.map((j) => fetchMedia(deps, client, j.data)));
      } finally {
        await client.close();
      }
    },
  },
};
