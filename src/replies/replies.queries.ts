import { sql } from 'kysely';
import { handleLockKey, lockKeys } from '../db/advisory-locks.js';
import { arrayLiteral } from '../db/array-literal.js';
import { type Executor, PREPARED } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../db/message-columns.js';
import type { EmailHeaders, ManagedBy } from '../db/types.js';
import { wellFormedJson } from '../text/well-formed.js';
import { type ThreadReader, visibleThreads } from '../threads/visibility.js';

/** A thread the reader sees and a reply can go to, with what sending needs: its connection and contact handle. */
export async function findReplyThread(db: Executor, reader: ThreadReader, threadId: number) {
  return (
    db
      .selectFrom('threads')
      .innerJoin('connections', 'connections.id', 'threads.connection_id')
      .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
      // The open conversation (docs/reports.md), read here so a reply that is not its first answer costs nothing more.
      .leftJoin('conversations', (j) => j.onRef('conversations.thread_id', '=', 'threads.id').on('conversations.resolved_at', 'is', null))
      .select([
        'threads.id',
        'threads.workspace_id',
        'threads.team_id',
        'conversations.id as conversation_id',
        'conversations.opened_at as conversation_opened_at',
        sql<boolean | null>`conversations.first_response_at IS NOT NULL`.as('conversation_answered'),
        'threads.connection_id',
        'threads.contact_id',
        'threads.last_inbound_at',
        'threads.assignee_id',
        'threads.sla',
        'connections.integration_key',
        'connections.business_account_id',
        'connections.deleted_at as connection_deleted_at',
        'contacts.erased_at as contact_erased_at',
      ])
      .where('threads.workspace_id', '=', reader.workspaceId)
      .where('threads.id', '=', threadId)
      .where(visibleThreads(reader))
      // Read by every reply: planning it was as dear as running it.
      .modifyEnd(PREPARED)
      .executeTakeFirst()
  );
}

/** The outbound message, `queued`, and the thread's preview moved to it. */
export async function insertReply(
  db: Executor,
  row: {
    workspaceId: number;
    threadId: number;
    connectionId: number;
    text: string;
    preview: string;
    authorId: number | null;
    /** The service wrote it on its own (a rule, an away message, a survey). */
    automation?: boolean;
    /** A template reply: the `template` object WhatsApp is sent. */
    template?: unknown;
    email?: EmailHeaders;
  },
  at: Date,
) {
  const message = await db
    .insertInto('messages')
    .values({
      workspace_id: row.workspaceId,
      thread_id: row.threadId,
      connection_id: row.connectionId,
      direction: 'outbound',
      external_id: null,
      text: row.text,
      status: 'queued',
      author_id: row.authorId,
      automation: row.automation === true,
      template: row.template === undefined ? null : wellFormedJson(row.template),
      email: row.email ? wellFormedJson(row.email) : null,
      created_at: at,
      updated_at: at,
    })
    .returning(MESSAGE_COLUMNS)
    .modifyEnd(PREPARED)
    .executeTakeFirstOrThrow();
  await db
    .updateTable('threads')
    .set({
      last_message_at: at,
      last_message_preview: row.preview,
      updated_at: at,
      conversation_messages_out: sql`conversation_messages_out + 1`,
    })
    .where('id', '=', row.threadId)
    .modifyEnd(PREPARED)
    .execute();
  return message;
}

/**
 * Everything a send needs, for the messages of `ids` still `queued` (a message that moved on
 * is not sent again: a duplicate job is a no-op). The contact's handle is the one on the
 * connection's channel; for e-mail, the last inbound message of the thread gives the
 * subject and Message-ID to answer in; Messenger/Instagram tag a reply by the thread's
 * `last_inbound_at` (docs/replies.md, "Reply windows").
 */
export async function findSendContexts(db: Executor, ids: number[]) {
  if (ids.length === 0) return [];
  const { rows } = await sql<{
    id: number;
    workspace_id: number;
    thread_id: number;
    connection_id: number;
    text: string;
    integration_key: string;
    external_account_id: string;
    managed_by: ManagedBy;
    /** Deleted since the reply was queued: its threads are read-only, nothing more is sent. */
    connection_deleted: boolean;
    to: string | null;
    last_inbound_external_id: string | null;
    last_inbound_text: string | null;
    last_inbound_email: EmailHeaders | null;
    email: EmailHeaders | null;
    last_inbound_at: Date | null;
    template: unknown;
    /** The service wrote it on its own (an away message, a rule, a survey): mailed as automatic. */
    automation: boolean;
    /** Whether any file is linked to it: most replies have none, and their attachments are not read. */
    has_attachments: boolean;
  }>`${PREPARED}
    SELECT m.id, m.workspace_id, m.thread_id, m.connection_id, m.text, m.template, m.email, m.automation, c.integration_key, c.external_account_id, c.managed_by,
           c.deleted_at IS NOT NULL AS connection_deleted,
           h.external_id AS to, li.external_id AS last_inbound_external_id, li.text AS last_inbound_text,
           li.email AS last_inbound_email, t.last_inbound_at,
           EXISTS (SELECT 1 FROM attachments a WHERE a.message_id = m.id) AS has_attachments
    FROM messages m
    JOIN threads t ON t.id = m.thread_id
    JOIN connections c ON c.id = m.connection_id
    LEFT JOIN LATERAL (
      SELECT external_id FROM contact_handles
      WHERE contact_id = t.contact_id AND integration_key = c.integration_key
      LIMIT 1
    ) h ON true
    LEFT JOIN LATERAL (
      SELECT external_id, text, email FROM messages
      WHERE thread_id = m.thread_id AND direction = 'inbound'
      ORDER BY created_at DESC, id DESC
      LIMIT 1
    ) li ON true
    WHERE m.id = ANY(${ids}::bigint[]) AND m.direction = 'outbound' AND m.status = 'queued'`.execute(db);
  return rows;
}

/**
 * A send's outcome to record. `sent` has no `externalId` (and an `error` saying why) when the
 * provider's id could not be stored: the reply went out and is never sent again.
 */
export type SendResult =
  | { id: number; status: 'sent'; externalId: string | null; error?: string }
  | { id: number; status: 'failed'; error: string };

/**
 * Handles a provider named for the recipients of replies it took (SendOutcome's `recipientId`):
 * each becomes a handle of its thread's contact, so the person's messages, which come from that
 * id, join the contact and thread the business wrote to (docs/replies.md, "Starting a
 * conversation"). Locked as upsertContacts locks a handle; one already held by a contact (the
 * same, or another that wrote first: merge them) is left as it is.
 */
export async function addRecipientHandles(
  db: Executor,
  handles: readonly { workspaceId: number; threadId: number; integrationKey: string; externalId: string }[],
): Promise<void> {
  if (handles.length === 0) return;
  await lockKeys(
    db,
    handles.map((h) => handleLockKey(h.workspaceId, h.integrationKey, h.externalId)),
  );
  await sql`
    INSERT INTO contact_handles (contact_id, workspace_id, integration_key, external_id)
    SELECT t.contact_id, t.workspace_id, k.integration_key, k.external_id
    FROM unnest(${arrayLiteral(handles.map((h) => h.threadId))}::bigint[], ${arrayLiteral(handles.map((h) => h.integrationKey))}::text[], ${arrayLiteral(handles.map((h) => h.externalId))}::text[])
      AS k(thread_id, integration_key, external_id)
    JOIN threads t ON t.id = k.thread_id
    JOIN contacts c ON c.id = t.contact_id AND c.erased_at IS NULL
    ON CONFLICT DO NOTHING`.execute(db);
}

/** The first of `candidates` that is a handle of the workspace on `integrationKey`, if any. */
export async function firstKnownHandle(
  db: Executor,
  workspaceId: number,
  integrationKey: string,
  candidates: readonly string[],
): Promise<string | undefined> {
  const { rows } = await sql<{ external_id: string }>`
    SELECT h.external_id FROM contact_handles h
    JOIN unnest(${arrayLiteral(candidates)}::text[]) WITH ORDINALITY AS k(external_id, n) ON k.external_id = h.external_id
    WHERE h.workspace_id = ${workspaceId} AND h.integration_key = ${integrationKey}
    ORDER BY k.n LIMIT 1`.execute(db);
  return rows[0]?.external_id;
}
