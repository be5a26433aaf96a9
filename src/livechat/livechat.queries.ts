import { type Selectable, sql } from 'kysely';
import { lockKey } from '../db/advisory-locks.js';
import type { Executor } from '../db/database.js';
import { MESSAGE_COLUMNS, messageColumnsSql } from '../db/message-columns.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { MessagesTable } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';

/** The live livechat connection a widget key names; undefined when none does (or it was deleted). */
export async function findWidget(db: Executor, widgetKey: string) {
  return db
    .selectFrom('connections')
    .select([
      'id',
      'workspace_id',
      'external_account_id',
      'name',
      'allowed_origins',
      'livechat_title',
      'livechat_colour',
      'livechat_greeting',
      'livechat_pre_chat',
    ])
    .where('integration_key', '=', 'livechat')
    .where('external_account_id', '=', widgetKey)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export type Widget = NonNullable<Awaited<ReturnType<typeof findWidget>>>;

const VISITOR_COLUMNS = ['id', 'workspace_id', 'connection_id', 'contact_id', 'thread_id', 'handle', 'expires_at'] as const;

/** The visitor holding the token of this hash on this widget, while the token lasts. */
export async function findVisitor(db: Executor, connectionId: number, tokenHash: string, now: Date) {
  return db
    .selectFrom('livechat_visitors')
    .select(VISITOR_COLUMNS)
    .where('token_hash', '=', tokenHash)
    .where('connection_id', '=', connectionId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

export type Visitor = NonNullable<Awaited<ReturnType<typeof findVisitor>>>;

/** A visitor by its id, as it is now (its contact may have changed by a merge since its token was read). */
export async function findVisitorById(db: Executor, id: number): Promise<Visitor | undefined> {
  return db.selectFrom('livechat_visitors').select(VISITOR_COLUMNS).where('id', '=', id).executeTakeFirst();
}

/**
 * Serialises the visitors started from one address until the transaction ends (an advisory
 * lock), so parallel requests cannot all slip in under the limit; then counts those started
 * since `since`, with the oldest of them.
 */
export async function countRecentConversations(db: Executor, ip: string, since: Date) {
  await lockKey(db, `livechat-address:${ip}`);
  const { rows } = await sql<{ n: number; oldest: Date | null }>`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM livechat_visitors WHERE ip = ${ip} AND created_at > ${since}`.execute(db);
  return rows[0]!;
}

/** The open thread of a visitor's handle on a widget, with its contact: what a conversation opened. */
export async function findHandleThread(db: Executor, connectionId: number, workspaceId: number, handle: string) {
  const { rows } = await sql<{ thread_id: number; contact_id: number }>`
    SELECT t.id AS thread_id, t.contact_id
    FROM contact_handles h
    JOIN threads t ON t.contact_id = h.contact_id AND t.connection_id = ${connectionId} AND t.status = 'open'
    WHERE h.workspace_id = ${workspaceId} AND h.integration_key = 'livechat' AND h.external_id = ${handle}`.execute(db);
  return rows[0];
}

/**
 * The e-mail a visitor typed, onto their contact. Only an empty one is filled: a contact
 * known under another address keeps it (the visitor's row still holds what they typed).
 */
export async function fillContactEmail(db: Executor, contactId: number, email: string) {
  await db.updateTable('contacts').set({ email, updated_at: sql`now()` }).where('id', '=', contactId).where('email', 'is', null).execute();
}

export async function insertVisitor(
  db: Executor,
  row: {
    workspaceId: number;
    connectionId: number;
    contactId: number;
    threadId: number;
    handle: string;
    tokenHash: string;
    email: string | null;
    ip: string;
    createdAt: Date;
    expiresAt: Date;
  },
) {
  await db
    .insertInto('livechat_visitors')
    .values({
      workspace_id: row.workspaceId,
      connection_id: row.connectionId,
      contact_id: row.contactId,
      thread_id: row.threadId,
      handle: row.handle,
      token_hash: row.tokenHash,
      email: row.email,
      ip: row.ip,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute();
}

/** The visitor's threads on its widget: the messages a visitor may see are theirs alone. */
const visitorThreads = (db: Executor, visitor: Pick<Visitor, 'connection_id' | 'contact_id'>) =>
  db.selectFrom('threads').select('id').where('contact_id', '=', visitor.contact_id).where('connection_id', '=', visitor.connection_id);

/**
 * Locks the visitor's row until the transaction ends, so one visitor's parallel posts are
 * counted one after another; then counts what it wrote since `since`, with the oldest.
 */
export async function countRecentVisitorMessages(db: Executor, visitor: Visitor, since: Date) {
  await db.selectFrom('livechat_visitors').select('id').where('id', '=', visitor.id).forUpdate().execute();
  const row = await db
    .selectFrom('messages')
    .select([sql<number>`count(*)::int`.as('n'), sql<Date | null>`min(created_at)`.as('oldest')])
    .where('thread_id', 'in', visitorThreads(db, visitor))
    .where('direction', '=', 'inbound')
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return row;
}

/** A message the visitor wrote, by the id the visitor route gave it. */
export async function findMessageByExternalId(db: Executor, connectionId: number, externalId: string) {
  return db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('connection_id', '=', connectionId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
}

/**
 * What a visitor may read of its threads: the messages themselves, never agents' private
 * notes nor activity lines (kind `note`, `activity`).
 */
const visitorMessages = (db: Executor, visitor: Pick<Visitor, 'connection_id' | 'contact_id'>) =>
  db
    .selectFrom('messages')
    .select(MESSAGE_COLUMNS)
    .where('thread_id', 'in', visitorThreads(db, visitor))
    .where('kind', '=', 'message')
    .where('private', '=', false);

/** The visitor's messages, both directions, newest first, one cursor page. */
export async function listVisitorMessages(db: Executor, visitor: Visitor, page: CursorRequest) {
  return keysetPage(visitorMessages(db, visitor), BY_CREATED, page);
}

/** One message, only if it is in one of the visitor's threads and the visitor may read it. */
export async function findVisitorMessage(db: Executor, visitor: Pick<Visitor, 'connection_id' | 'contact_id'>, messageId: number) {
  return visitorMessages(db, visitor).where('id', '=', messageId).executeTakeFirst();
}

/**
 * A reply a visitor's socket took: `delivered`, whether the sender has recorded `sent` yet or
 * not (it records `sent` only on a message still `queued`). Its provider id is its own id, as
 * the sender gives it. Undefined when it had already moved on (another socket took it first).
 */
export async function markDelivered(db: Executor, messageId: number, at: Date) {
  const { rows } = await sql<Selectable<MessagesTable>>`
    UPDATE messages SET status = 'delivered', external_id = COALESCE(external_id, id::text), updated_at = ${at}
    WHERE id = ${messageId} AND direction = 'outbound' AND status IN ('queued', 'sent')
    RETURNING ${messageColumnsSql()}`.execute(db);
  return rows[0];
}
