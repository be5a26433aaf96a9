import { type Selectable, sql } from 'kysely';
import { handleLockKey, lockKeys } from '../db/advisory-locks.js';
import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { ContactsTable, ThreadsTable } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';
import { wellFormedJson } from '../text/well-formed.js';

/** `%`, `_` and the escape character itself match only themselves in a LIKE pattern. */
function likeContains(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A workspace's contacts, newest first, one cursor page; with `q`, only those whose name,
 * e-mail or one of whose handles contains it, ignoring case.
 */
export async function searchContacts(db: Executor, workspaceId: number, q: string | undefined, page: CursorRequest) {
  let query = db.selectFrom('contacts').selectAll().where('workspace_id', '=', workspaceId).where('erased_at', 'is', null);
  if (q !== undefined && q !== '') {
    const pattern = likeContains(q);
    query = query.where((eb) =>
      eb.or([
        eb('name', 'ilike', pattern),
        eb('email', 'ilike', pattern),
        eb.exists(
          eb
            .selectFrom('contact_handles as h')
            .select(sql`1`.as('one'))
            .whereRef('h.contact_id', '=', 'contacts.id')
            .where('h.external_id', 'ilike', pattern),
        ),
      ]),
    );
  }
  return keysetPage(query, BY_CREATED, page);
}

export async function findContact(db: Executor, workspaceId: number, id: number) {
  return db
    .selectFrom('contacts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('erased_at', 'is', null)
    .executeTakeFirst();
}

/** The handles of these contacts, for the Contact resources that show them. */
export async function listHandles(db: Executor, contactIds: number[]) {
  if (contactIds.length === 0) return [];
  return db.selectFrom('contact_handles').selectAll().where('contact_id', 'in', contactIds).execute();
}

export interface ContactPatch {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  attributes?: Record<string, string | number | boolean>;
}

export async function updateContact(db: Executor, workspaceId: number, id: number, patch: ContactPatch, at: Date) {
  const { attributes, ...fields } = patch;
  return db
    .updateTable('contacts')
    .set({ ...fields, ...(attributes !== undefined ? { attributes: wellFormedJson(attributes) } : {}), updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('erased_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

// ---- merge ----

/**
 * Takes the advisory locks the worker takes before it resolves these handles to a contact
 * (upsertContacts in src/messaging/messaging.queries.ts, same key format and order), so a
 * delivery for a merged contact waits for the merge and then finds the surviving contact.
 */
export async function lockHandles(db: Executor, workspaceId: number, contactId: number): Promise<void> {
  const handles = await db
    .selectFrom('contact_handles')
    .select(['integration_key', 'external_id'])
    .where('contact_id', '=', contactId)
    .execute();
  await lockKeys(
    db,
    handles.map((h) => handleLockKey(workspaceId, h.integration_key, h.external_id)),
  );
}

/** Locks the workspace's contacts among `ids`, in id order; returns those that exist. */
export async function lockContacts(db: Executor, workspaceId: number, ids: number[]): Promise<Selectable<ContactsTable>[]> {
  return db
    .selectFrom('contacts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .where('erased_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Every thread of these contacts, locked. */
export async function lockThreadsOf(db: Executor, contactIds: number[]): Promise<Selectable<ThreadsTable>[]> {
  return db.selectFrom('threads').selectAll().where('contact_id', 'in', contactIds).orderBy('id').forUpdate().execute();
}

/**
 * Folds threads into `keepId`: their messages (and live chat visitors) move to it, it takes
 * the latest activity of them all, their unread messages stay unread on it, and they are
 * deleted. Their resolved conversations move with them, so the reports keep counting them and
 * a survey sent for one stays answerable; an open one ends with its thread (the kept thread's
 * own conversation goes on). Notifications of their messages move too; the others (assigned,
 * SLA) were about the deleted thread and go with it.
 */
export async function foldThreads(db: Executor, keepId: number, foldedIds: number[], at: Date): Promise<void> {
  if (foldedIds.length === 0) return;
  await db.updateTable('messages').set({ thread_id: keepId }).where('thread_id', 'in', foldedIds).execute();
  await db
    .updateTable('conversations')
    .set({ thread_id: keepId })
    .where('thread_id', 'in', foldedIds)
    .where('resolved_at', 'is not', null)
    .execute();
  await db.updateTable('livechat_visitors').set({ thread_id: keepId }).where('thread_id', 'in', foldedIds).execute();
  // A notification of a message (a mention, a contact's message) follows the message.
  await db
    .updateTable('notifications')
    .set({ thread_id: keepId })
    .where('thread_id', 'in', foldedIds)
    .where('message_id', 'is not', null)
    .execute();
  await sql`
    UPDATE threads t SET
      last_message_preview = CASE WHEN f.last_message_at > t.last_message_at THEN COALESCE(f.last_message_preview, t.last_message_preview) ELSE t.last_message_preview END,
      last_message_at = GREATEST(t.last_message_at, f.last_message_at),
      last_inbound_at = GREATEST(t.last_inbound_at, (SELECT max(last_inbound_at) FROM threads WHERE id = ANY(${foldedIds}::bigint[]))),
      unread_count = t.unread_count + (SELECT COALESCE(sum(unread_count), 0) FROM threads WHERE id = ANY(${foldedIds}::bigint[]))::int,
      updated_at = ${at}
    FROM (SELECT last_message_at, last_message_preview FROM threads WHERE id = ANY(${foldedIds}::bigint[]) ORDER BY last_message_at DESC, id DESC LIMIT 1) f
    WHERE t.id = ${keepId}`.execute(db);
  await db.deleteFrom('threads').where('id', 'in', foldedIds).execute();
}

export async function reassignThread(db: Executor, threadId: number, contactId: number, at: Date): Promise<void> {
  await db.updateTable('threads').set({ contact_id: contactId, updated_at: at }).where('id', '=', threadId).execute();
}

/** Moves the other contact's handles and live chat visitors to `intoId`, then deletes it. */
export async function absorbContact(db: Executor, intoId: number, otherId: number, fill: ContactPatch, at: Date) {
  await db.updateTable('contact_handles').set({ contact_id: intoId }).where('contact_id', '=', otherId).execute();
  await db.updateTable('livechat_visitors').set({ contact_id: intoId }).where('contact_id', '=', otherId).execute();
  await db.deleteFrom('contacts').where('id', '=', otherId).execute();
  const { attributes, ...fields } = fill;
  return db
    .updateTable('contacts')
    .set({ ...fields, ...(attributes !== undefined ? { attributes: wellFormedJson(attributes) } : {}), updated_at: at })
    .where('id', '=', intoId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
