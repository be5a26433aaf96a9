import { type Selectable, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { AttachmentKind, AttachmentsTable } from '../db/types.js';
import { type ThreadReader, visibleThreadId } from '../threads/visibility.js';

export type AttachmentRow = Selectable<AttachmentsTable>;

/** The columns the API shows and the content route needs (never `source`: it may hold a provider's URL). */
const COLUMNS = [
  'id',
  'workspace_id',
  'message_id',
  'kind',
  'content_type',
  'filename',
  'size',
  'status',
  'error',
  'storage_key',
  'uploaded_by_visitor',
  'created_at',
] as const;
export type AttachmentView = Pick<AttachmentRow, (typeof COLUMNS)[number]>;

/**
 * The attachments of these messages, in one query however many messages a page holds (no
 * query per message), grouped by message and in the order they were added.
 */
export async function attachmentsOf(db: Executor, messageIds: readonly number[]): Promise<Map<number, AttachmentView[]>> {
  const byMessage = new Map<number, AttachmentView[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db
    .selectFrom('attachments')
    .select(COLUMNS)
    // One array parameter, not one per message: an inbound batch names 250.
    .where('message_id', '=', sql<number>`ANY(${[...new Set(messageIds)]}::bigint[])`)
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const list = byMessage.get(row.message_id!);
    if (list) list.push(row);
    else byMessage.set(row.message_id!, [row]);
  }
  return byMessage;
}

/**
 * One attachment of the reader's workspace; undefined for an unknown id, another workspace's,
 * or one on a message of a thread the reader does not see (an upload on no message yet is
 * the workspace's).
 */
export async function findAttachment(db: Executor, reader: ThreadReader, id: number): Promise<AttachmentView | undefined> {
  return db
    .selectFrom('attachments')
    .select(COLUMNS)
    .where('id', '=', id)
    .where('workspace_id', '=', reader.workspaceId)
    .where((eb) =>
      eb.or([
        eb('message_id', 'is', null),
        visibleThreadId(reader, sql`(SELECT m.thread_id FROM messages m WHERE m.id = attachments.message_id)`),
      ]),
    )
    .executeTakeFirst();
}

/** One attachment whatever its workspace: for a signed link, which names no workspace. */
export async function findAttachmentById(db: Executor, id: number): Promise<AttachmentView | undefined> {
  return db.selectFrom('attachments').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** An upload whose bytes are already stored under `storageKey`: `stored` at once, on no message yet. */
export async function insertUpload(
  db: Executor,
  row: {
    workspaceId: number;
    kind: AttachmentKind;
    contentType: string;
    filename: string | null;
    size: number;
    storageKey: string;
    visitorId: number | null;
    now: Date;
  },
): Promise<AttachmentView> {
  return db
    .insertInto('attachments')
    .values({
      workspace_id: row.workspaceId,
      kind: row.kind,
      content_type: row.contentType,
      filename: row.filename,
      size: row.size,
      status: 'stored',
      storage_key: row.storageKey,
      uploaded_by_visitor: row.visitorId,
      created_at: row.now,
      updated_at: row.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Puts a visitor's own unused uploads on `messageId`; answers those it took (id and kind). Locked rows
 * (`FOR UPDATE` through the UPDATE itself) cannot be taken twice by two parallel messages.
 */
export async function attachVisitorUploads(db: Executor, visitorId: number, ids: readonly number[], messageId: number, now: Date) {
  if (ids.length === 0) return [];
  return db
    .updateTable('attachments')
    .set({ message_id: messageId, updated_at: now })
    .where('id', 'in', [...ids])
    .where('uploaded_by_visitor', '=', visitorId)
    .where('message_id', 'is', null)
    .returning(['id', 'kind'])
    .execute();
}

/**
 * Deletes at most `limit` uploads that no message took, made before `cutoffs.any` (or, a live
 * chat visitor's, before `cutoffs.visitors`), and answers their storage keys so their bytes
 * can be removed too. The rows go first: a key whose row is gone is never served, and its
 * bytes are removed right after.
 */
export async function deleteUnusedUploads(
  db: Executor,
  cutoffs: { any: Date; visitors: Date },
  limit: number,
): Promise<{ storageKeys: string[]; more: boolean }> {
  const rows = await db
    .deleteFrom('attachments')
    .where(
      'id',
      'in',
      db
        .selectFrom('attachments')
        .select('id')
        .where('message_id', 'is', null)
        .where((eb) =>
          eb.or([
            eb('created_at', '<', cutoffs.any),
            eb.and([eb('created_at', '<', cutoffs.visitors), eb('uploaded_by_visitor', 'is not', null)]),
          ]),
        )
        .orderBy('created_at')
        .limit(limit),
    )
    // Checked again on the row itself: a reply that took the upload meanwhile keeps it.
    .where('message_id', 'is', null)
    .returning('storage_key')
    .execute();
  return { storageKeys: rows.flatMap((r) => (r.storage_key ? [r.storage_key] : [])), more: rows.length === limit };
}
