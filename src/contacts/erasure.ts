import type { PgBoss } from 'pg-boss';
import { recordAudit, type Trail } from '../audit/audit.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { exportKeysHolding, withdrawExportsHolding } from '../exports/exports.queries.js';
import { errors } from '../http/errors.js';
import { defaultQueueOptions, jobsIn, type QueueDefinition } from '../jobs/queue.js';
import { publishVisitorEvents } from '../livechat/visitor-events.js';
import { announce } from '../messaging/announce.js';
import { lockHandles } from './contacts.queries.js';
import { attachmentsOfErased, endVisitorsOf, eraseTraces, findErasedContact, tombstoneContact, traceOf } from './erasure.queries.js';

/** The queue that removes an erased contact's data; its jobs carry the contact's id only. */
export const CONTACT_ERASURE_QUEUE = 'contact-erasure';

export interface ContactErasureJob {
  contactId: number;
}

async function enqueueErasure(boss: PgBoss, trx: Executor, job: ContactErasureJob): Promise<void> {
  await boss.send(CONTACT_ERASURE_QUEUE, job, { db: jobsIn(trx) });
}

/**
 * `POST /v1/contacts/:id/erase`: the contact becomes a tombstone at once (every field of the
 * person cleared, 404 on every route, its live chat visitors' sockets closed) and a job removes the rest (`eraseContactData`), queued
 * and audited in the same transaction. Asking again for a tombstone queues the job again: a
 * second run finds what a failed one left.
 */
export async function requestErasure(deps: Deps, workspaceId: number, id: number, trail: Trail): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const row = await tombstoneContact(trx, workspaceId, id, deps.now());
    if (!row) throw errors.notFound('contact');
    // The visitors' tokens end with the contact (401 from now on); once this commits, every api
    // process closes the sockets it holds of them, as for a blocked visitor (4003).
    const handles = await endVisitorsOf(trx, id, deps.now());
    await publishVisitorEvents(
      trx,
      handles.map((visitor) => ({ type: 'visitor.blocked' as const, visitor })),
    );
    await recordAudit(trx, trail, 'contact.erased', { type: 'contact', id });
    await enqueueErasure(deps.boss, trx, { contactId: id });
  });
}

/**
 * Removes an erased contact's data (docs/privacy.md, "Erasure"). Files first: their bytes go
 * from the store, and only then, in one transaction, every row that held the person, so a
 * run that fails half way leaves the rows that name the bytes still to delete and the next
 * attempt finds them. The handles' locks are the worker's (upsertContacts), so a delivery from
 * the same person waits, then makes a new contact. Idempotent: a second run finds nothing left.
 */
export async function eraseContactData(deps: Pick<Deps, 'db' | 'storage' | 'boss' | 'config' | 'log' | 'now'>, contactId: number) {
  const contact = await findErasedContact(deps.db, contactId);
  if (!contact) return;
  const before = await traceOf(deps.db, contactId);
  const removed = new Set<string>();
  for (const f of await attachmentsOfErased(deps.db, before.threadIds, before.visitorIds)) {
    if (!f.storage_key) continue;
    await deps.storage.delete(f.storage_key);
    removed.add(f.storage_key);
  }
  // Exports made before may hold the person: the contact's own, and every workspace export.
  for (const key of await exportKeysHolding(deps.db, contact.workspace_id, contactId)) {
    await deps.storage.delete(key);
    removed.add(key);
  }
  const c = { id: contact.id, workspaceId: contact.workspace_id, appId: contact.app_id };
  const late = await deps.db.transaction().execute(async (trx) => {
    await lockHandles(trx, c.workspaceId, c.id);
    const trace = await traceOf(trx, contactId);
    const attachments = await attachmentsOfErased(trx, trace.threadIds, trace.visitorIds);
    await eraseTraces(
      trx,
      c,
      trace,
      attachments.map((a) => a.id),
    );
    const exportKeys = await withdrawExportsHolding(trx, c.workspaceId, contactId, deps.now());
    await announce(deps, trx, [{ type: 'contact.erased', workspaceId: c.workspaceId, contactId }], deps.now());
    return [...attachments.flatMap((a) => (a.storage_key ? [a.storage_key] : [])), ...exportKeys].filter((k) => !removed.has(k));
  });
  // Files that arrived while the bytes above were removed: their rows are gone with the rest.
  for (const key of late) await deps.storage.delete(key);
}

/** `contact-erasure`: one job per erasure request; a failure is retried with the queue's backoff. */
export const contactErasureQueue: QueueDefinition<ContactErasureJob> = {
  name: CONTACT_ERASURE_QUEUE,
  options: { ...defaultQueueOptions, expireInSeconds: 600 },
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 2 },
    async handle(deps, jobs) {
      for (const job of jobs) await eraseContactData(deps, job.data.contactId);
    },
  },
};
