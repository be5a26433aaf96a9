import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import { keysetPage, offsetPage } from '../db/pages.js';
import type { AuditLogTable } from '../db/types.js';
import type { CursorRequest, OffsetRequest } from '../http/pagination.js';
import { wellFormedJson } from '../text/well-formed.js';

export interface NewAuditEntry {
  workspaceId: number | null;
  actorType: AuditLogTable['actor_type'];
  actorId: number | null;
  action: string;
  targetType: string | null;
  targetId: string | null;
  ip: string | null;
  changes: Record<string, unknown> | null;
}

export async function insertAuditEntry(db: Executor, e: NewAuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      workspace_id: e.workspaceId,
      actor_type: e.actorType,
      actor_id: e.actorId,
      action: e.action,
      target_type: e.targetType,
      target_id: e.targetId,
      ip: e.ip,
      changes: e.changes === null ? null : sql`${wellFormedJson(e.changes)}::jsonb`,
    })
    .execute();
}

export interface AuditFilter {
  /** A workspace's entries; undefined with `operatorOnly`: the platform operator's own. */
  workspaceId?: number;
  operatorOnly?: boolean;
  /** With `actorType` (default `user`): user ids and API key ids are counted apart. */
  actorId?: number;
  actorType?: AuditLogTable['actor_type'];
  action?: string;
  from?: Date;
  to?: Date;
}

const BY_AT = { at: 'audit_log.at', id: 'audit_log.id' };

/** The entries `filter` selects, with the actors joined, before any column is chosen. */
function filtered(db: Executor, filter: AuditFilter) {
  let q = db
    .selectFrom('audit_log')
    .leftJoin('users', (j) => j.onRef('users.id', '=', 'audit_log.actor_id').on('audit_log.actor_type', 'in', ['user', 'operator']))
    .leftJoin('api_keys', (j) => j.onRef('api_keys.id', '=', 'audit_log.actor_id').on('audit_log.actor_type', '=', 'api_key'));
  if (filter.workspaceId !== undefined) q = q.where('audit_log.workspace_id', '=', filter.workspaceId);
  if (filter.operatorOnly) q = q.where('audit_log.actor_type', '=', 'operator');
  if (filter.actorType !== undefined) q = q.where('audit_log.actor_type', '=', filter.actorType);
  if (filter.actorId !== undefined) {
    q = q.where('audit_log.actor_id', '=', filter.actorId);
    if (filter.actorType === undefined) q = q.where('audit_log.actor_type', 'in', ['user', 'operator']);
  }
  if (filter.action !== undefined) q = q.where('audit_log.action', '=', filter.action);
  if (filter.from !== undefined) q = q.where('audit_log.at', '>=', filter.from);
  if (filter.to !== undefined) q = q.where('audit_log.at', '<', filter.to);
  return q;
}

/** Every column of an entry, and the actor's name as it is now (users and keys are never deleted). */
const withActorName = <Q extends ReturnType<typeof filtered>>(q: Q) =>
  q.selectAll('audit_log').select(sql<string | null>`coalesce(users.name, api_keys.name)`.as('actor_name'));

/** A workspace's entries newest first, one cursor page (a tenant list). */
export async function listAuditLog(db: Executor, filter: AuditFilter, page: CursorRequest) {
  return keysetPage(withActorName(filtered(db, filter)), BY_AT, page);
}

/** The operator's entries newest first, one offset page (an operator list, SPEC §8.1). */
export async function listAuditLogPage(db: Executor, filter: AuditFilter, page: OffsetRequest) {
  return offsetPage(filtered(db, filter), page, (q) => withActorName(q).orderBy('audit_log.at', 'desc').orderBy('audit_log.id', 'desc'));
}

/**
 * Deletes up to `limit` entries older than `days` days: the one DELETE the table's trigger lets
 * through, because this transaction says how many days are kept (and the trigger checks each
 * row against it, so a wrong cutoff here still deletes nothing younger).
 */
export async function deleteAuditBatch(db: Db, days: number, now: Date, limit: number): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 24 * 3600 * 1000);
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('inbox.audit_retention_days', ${String(days)}, true)`.execute(trx);
    const { numAffectedRows } = await sql`
      DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ${cutoff} ORDER BY at LIMIT ${limit})`.execute(trx);
    return Number(numAffectedRows ?? 0);
  });
}

/** Retention of the audit log (INBOX_AUDIT_RETENTION_DAYS): batch after batch, each its own transaction. */
export async function pruneAuditLog(db: Db, days: number, now: Date, batchSize = 1000, maxBatches = 100) {
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const n = await deleteAuditBatch(db, days, now, batchSize);
    deleted += n;
    if (n < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
