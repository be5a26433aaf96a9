import { type Selectable, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../db/message-columns.js';
import type { AttachmentKind, MessagesTable } from '../db/types.js';
import type { MediaSource } from '../messaging/events.js';
import { cleanFilename } from './content-type.js';
import type { StoredDelivery } from './delivery-files.js';

/** What a fetch-media job keeps in `attachments.source`: the MediaSource, and for a file inside a delivery, which delivery. */
export type StoredSource = MediaSource & { deliveryId?: string };

export interface PendingAttachmentInput {
  workspaceId: number;
  messageId: number;
  kind: AttachmentKind;
  contentType: string | undefined;
  filename: string | undefined;
  source: StoredSource;
}

/**
 * Inserts inbound attachments `pending`, one statement for the batch; answers their ids in order.
 * A sender's filename is cleaned as an upload's is (the last segment, no control characters).
 */
export async function insertPendingAttachments(db: Executor, rows: PendingAttachmentInput[], at: Date): Promise<number[]> {
  if (rows.length === 0) return [];
  const { rows: inserted } = await sql<{ id: string | number }>`
    INSERT INTO attachments (workspace_id, message_id, kind, content_type, filename, status, source, created_at, updated_at)
    SELECT w, m, k, coalesce(ct, 'application/octet-stream'), f, 'pending', s, ${at}::timestamptz, ${at}::timestamptz
    FROM unnest(${rows.map((r) => r.workspaceId)}::int[], ${rows.map((r) => r.messageId)}::bigint[], ${rows.map((r) => r.kind)}::text[],
                ${rows.map((r) => r.contentType ?? null)}::text[], ${rows.map((r) => cleanFilename(r.filename))}::text[],
                ${rows.map((r) => JSON.stringify(r.source))}::jsonb[])
      WITH ORDINALITY AS v(w, m, k, ct, f, s, n)
    ORDER BY n
    RETURNING id`.execute(db);
  return inserted.map((r) => Number(r.id));
}

/** A pending attachment with what downloading it needs: its message and the message's connection. */
export async function findFetchable(db: Executor, attachmentId: number) {
  return db
    .selectFrom('attachments as a')
    .innerJoin('messages as m', 'm.id', 'a.message_id')
    .innerJoin('connections as c', 'c.id', 'm.connection_id')
    .select([
      'a.id',
      'a.status',
      'a.content_type',
      'a.source',
      'a.message_id',
      'm.external_id as message_external_id',
      'c.id as connection_id',
      'c.integration_key',
      'c.managed_by',
    ])
    .where('a.id', '=', attachmentId)
    .executeTakeFirst();
}

/** A stored delivery, for a file that travelled inside it: its text, and its exact bytes when kept. */
export async function findDeliveryBody(db: Executor, deliveryId: string): Promise<StoredDelivery | undefined> {
  const row = await db.selectFrom('webhook_inbox').select(['raw_body', 'raw_bytes']).where('id', '=', deliveryId).executeTakeFirst();
  return row && { text: row.raw_body, bytes: row.raw_bytes };
}

/**
 * Settles a pending attachment (`stored` with its bytes, or `failed` with the reason) and
 * answers its message, to be announced; undefined when it was no longer pending (another
 * attempt settled it first), so nothing is announced twice.
 *
 * The message's row is locked first: the files of one message are fetched side by side, and
 * two settles that each read the message's attachments before the other committed would each
 * announce the other's file as still `pending`, so no `message.updated` would ever show them
 * all settled. Locked, the later settle waits and reads the earlier one's outcome. (Message
 * before attachment, the order a message's deletion takes them in.)
 */
export async function settleAttachment(
  db: Executor,
  attachmentId: number,
  outcome:
    | { status: 'stored'; size: number; contentType: string; storageKey: string; attempts: number }
    | { status: 'failed'; error: string; attempts: number },
  at: Date,
): Promise<Selectable<MessagesTable> | undefined> {
  await sql`SELECT m.id FROM messages m JOIN attachments a ON a.message_id = m.id WHERE a.id = ${attachmentId}
    FOR NO KEY UPDATE OF m`.execute(db);
  const settled = await db
    .updateTable('attachments')
    .set(
      outcome.status === 'stored'
        ? {
            status: 'stored',
            size: outcome.size,
            content_type: outcome.contentType,
            storage_key: outcome.storageKey,
            error: null,
            attempt_count: outcome.attempts,
            updated_at: at,
          }
        : { status: 'failed', error: outcome.error, attempt_count: outcome.attempts, updated_at: at },
    )
    .where('id', '=', attachmentId)
    .where('status', '=', 'pending')
    .returning('message_id')
    .executeTakeFirst();
  if (!settled?.message_id) return undefined;
  return db.selectFrom('messages').select(MESSAGE_COLUMNS).where('id', '=', settled.message_id).executeTakeFirst();
}

/** Whether attachment `id` is stored with its bytes under `key`. */
export async function storedUnder(db: Executor, id: number, key: string): Promise<boolean> {
  const row = await db
    .selectFrom('attachments')
    .select('storage_key')
    .where('id', '=', id)
    .where('status', '=', 'stored')
    .executeTakeFirst();
  return row?.storage_key === key;
}

/** Counts a failed attempt that will be retried (the reason is logged; `error` is for a final failure). */
export async function countAttempt(db: Executor, attachmentId: number, attempts: number, at: Date): Promise<void> {
  await db
    .updateTable('attachments')
    .set({ attempt_count: attempts, updated_at: at })
    .where('id', '=', attachmentId)
    .where('status', '=', 'pending')
    .execute();
}
