import type { PgBoss } from 'pg-boss';
import { recordAudit, type Trail } from '../audit/audit.js';
import { findContact } from '../contacts/contacts.queries.js';
import { uuid7 } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';
import { readAsOf } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { defaultQueueOptions, jobsIn, type QueueDefinition } from '../jobs/queue.js';
import { writeExportZip } from './export-zip.js';
import { deleteExpiredExports, findExportById, finishExport, insertExport } from './exports.queries.js';

/** An export's zip, and its row, are deleted this long after it was asked for. */
export const EXPORT_KEEP_HOURS = 24;

export const EXPORT_QUEUE = 'export';

export interface ExportJob {
  exportId: string;
}

async function enqueueExport(boss: PgBoss, trx: Executor, job: ExportJob): Promise<void> {
  await boss.send(EXPORT_QUEUE, job, { db: jobsIn(trx) });
}

/**
 * `POST /v1/contacts/:id/export` (`contactId`) and `POST /v1/workspace/export` (null): the
 * export's row, its audit entry and its job, in one transaction. Answers the export's id.
 */
export async function requestExport(deps: Deps, workspaceId: number, contactId: number | null, trail: Trail): Promise<string> {
  return deps.db.transaction().execute(async (trx) => {
    if (contactId !== null && !(await findContact(trx, workspaceId, contactId))) throw errors.notFound('contact');
    const id = uuid7();
    const now = deps.now();
    await insertExport(trx, { id, workspaceId, contactId, expiresAt: new Date(now.getTime() + EXPORT_KEEP_HOURS * 3_600_000) });
    await recordAudit(
      trx,
      trail,
      contactId === null ? 'workspace.exported' : 'contact.exported',
      contactId === null ? { type: 'workspace', id: workspaceId } : { type: 'contact', id: contactId },
      { exportId: { old: null, new: id } },
    );
    await enqueueExport(deps.boss, trx, { exportId: id });
    return id;
  });
}

/**
 * Builds an export's zip into the attachment store and marks it `ready`, or `failed` with the
 * reason (its partial bytes removed). A job for an export already finished, or deleted, does
 * nothing; one withdrawn by an erasure while it was written removes its zip.
 */
export async function runExport(deps: Deps, exportId: string): Promise<void> {
  const row = await findExportById(deps.db, exportId);
  if (row?.status !== 'pending') return;
  const key = `export/${exportId}.zip`;
  try {
    // The replica, if it already shows everything written before the export was asked for.
    const db = readAsOf(deps, row.created_at);
    const { size } = await writeExportZip({ ...deps, db }, { workspaceId: row.workspace_id, contactId: row.contact_id }, key);
    // Withdrawn while written (a contact in it was erased): its zip goes too.
    if (!(await finishExport(deps.db, exportId, { status: 'ready', storageKey: key, size }, deps.now()))) await deps.storage.delete(key);
  } catch (err) {
    deps.log.warn({ err, exportId }, 'an export failed');
    await deps.storage.delete(key).catch(() => {});
    await finishExport(deps.db, exportId, { status: 'failed', error: 'the export could not be written' }, deps.now());
  }
}

const EXPIRED_BATCH = 100;

/** Deletes exports past their time with their zips (the maintenance job, every ten minutes). */
export async function pruneExpiredExports(deps: Pick<Deps, 'db' | 'storage' | 'log'>, now: Date) {
  let deleted = 0;
  for (;;) {
    const { storageKeys, more } = await deleteExpiredExports(deps.db, now, EXPIRED_BATCH);
    for (const key of storageKeys)
      await deps.storage.delete(key).catch((err) => deps.log.warn({ err }, 'could not remove an expired export'));
    deleted += storageKeys.length;
    if (!more) return { deleted };
  }
}

/** `export`: one job per export; a zip of a large workspace takes a while, the heartbeat keeps it. */
export const exportQueue: QueueDefinition<ExportJob> = {
  name: EXPORT_QUEUE,
  options: { ...defaultQueueOptions, retryLimit: 2, expireInSeconds: 6 * 3600 },
  worker: {
    options: { batchSize: 1, pollingIntervalSeconds: 2 },
    async handle(deps, jobs) {
      for (const job of jobs) await runExport(deps, job.data.exportId);
    },
  },
};
