import type { Deps } from '../deps.js';
import { deleteUnusedUploads } from './attachments.queries.js';

/** An upload no message took within this long is deleted with its bytes (docs/attachments.md). */
export const UNUSED_UPLOAD_HOURS = 24;
/** A live chat visitor's upload (anonymous, so kept briefly: docs/security.md) within this long. */
export const UNUSED_VISITOR_UPLOAD_HOURS = 1;
const BATCH = 500;
/** Batches one maintenance run takes at most; the rest wait for the next run. */
const MAX_BATCHES = 20;

/**
 * Deletes uploads that no message used, and their bytes: a tenant's (`POST /v1/attachments`)
 * after UNUSED_UPLOAD_HOURS, a live chat visitor's after UNUSED_VISITOR_UPLOAD_HOURS. The row
 * goes first, so nothing can serve or use an upload whose bytes are being removed; bytes whose
 * removal fails are logged and left (no row points at them any more).
 */
export async function pruneUnusedUploads(deps: Pick<Deps, 'db' | 'storage' | 'log'>, now: Date) {
  const cutoffs = {
    any: new Date(now.getTime() - UNUSED_UPLOAD_HOURS * 3_600_000),
    visitors: new Date(now.getTime() - UNUSED_VISITOR_UPLOAD_HOURS * 3_600_000),
  };
  let deleted = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const { storageKeys, more } = await deleteUnusedUploads(deps.db, cutoffs, BATCH);
    for (const key of storageKeys) {
      await deps.storage.delete(key).catch((err) => deps.log.warn({ err }, 'could not remove the bytes of an unused upload'));
    }
    deleted += storageKeys.length;
    if (!more) return { deleted, more: false };
  }
  return { deleted, more: true };
}
