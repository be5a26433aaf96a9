import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { deleteEvents } from '../webhooks-out/events.queries.js';

/**
 * The writes of a contact's erasure (docs/privacy.md, "Erasure"). They reach into the tables
 * that hold the person's words and files because erasure is the one change that must find the
 * person wherever a delivery, a reply or an announcement put them.
 */

/** Makes the contact a tombstone: every field of the person cleared, `erased_at` set once. */
export async function tombstoneContact(db: Executor, workspaceId: number, id: number, at: Date) {
  return db
    .updateTable('contacts')
    .set({ name: null, email: null, phone: null, attributes: '{}', updated_at: at, erased_at: sql`COALESCE(erased_at, ${at})` })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning(['id', 'erased_at'])
    .executeTakeFirst();
}

/** Ends the tokens of the contact's live chat visitors now; answers their handles. */
export async function endVisitorsOf(db: Executor, contactId: number, at: Date): Promise<string[]> {
  const rows = await db
    .updateTable('livechat_visitors')
    .set({ expires_at: sql`LEAST(expires_at, ${at})` })
    .where('contact_id', '=', contactId)
    .returning('handle')
    .execute();
  return rows.map((r) => r.handle);
}

export async function findErasedContact(db: Executor, id: number) {
  return db
    .selectFrom('contacts')
    .innerJoin('workspaces', 'workspaces.id', 'contacts.workspace_id')
    .select(['contacts.id', 'contacts.workspace_id', 'workspaces.app_id'])
    .where('contacts.id', '=', id)
    .where('contacts.erased_at', 'is not', null)
    .executeTakeFirst();
}

/**
 * What identifies the person in raw text: their handles and the provider ids of the messages
 * of their threads (in both directions: status reports name the outbound ones). Read before
 * anything is deleted, so a second run after a failure finds the same.
 */
export async function traceOf(db: Executor, contactId: number) {
  const threads = await db.selectFrom('threads').select('id').where('contact_id', '=', contactId).execute();
  const threadIds = threads.map((t) => t.id);
  const handles = await db
    .selectFrom('contact_handles')
    .select(['integration_key', 'external_id'])
    .where('contact_id', '=', contactId)
    .execute();
  const messages =
    threadIds.length === 0
      ? []
      : await db.selectFrom('messages').select(['id', 'external_id']).where('thread_id', 'in', threadIds).execute();
  const providerIds = messages.flatMap((m) => (m.external_id === null ? [] : [m.external_id]));
  const visitors = await db.selectFrom('livechat_visitors').select(['id', 'handle', 'email']).where('contact_id', '=', contactId).execute();
  return {
    threadIds,
    /** The messages of the threads, some moved there from threads a merge folded and deleted. */
    messageIds: messages.map((m) => m.id),
    handles,
    visitorIds: visitors.map((v) => v.id),
    /** Strings a raw delivery carrying the person contains. Short ones would match strangers. */
    needles: [
      ...new Set(
        [...handles.map((h) => h.external_id), ...providerIds, ...visitors.flatMap((v) => [v.handle, v.email ?? ''])].filter(
          (s) => s.length >= MIN_NEEDLE,
        ),
      ),
    ],
  };
}

/** A handle or id shorter than this could be part of anyone's delivery (a count, a date). */
const MIN_NEEDLE = 6;

/** The stored files of the threads' messages and of the visitors' uploads not sent yet. */
export async function attachmentsOfErased(db: Executor, threadIds: number[], visitorIds: number[]) {
  if (threadIds.length === 0 && visitorIds.length === 0) return [];
  return db
    .selectFrom('attachments')
    .select(['id', 'storage_key'])
    .where((eb) =>
      eb.or([
        ...(threadIds.length > 0
          ? [eb('message_id', 'in', eb.selectFrom('messages').select('id').where('thread_id', 'in', threadIds))]
          : []),
        ...(visitorIds.length > 0 ? [eb('uploaded_by_visitor', 'in', visitorIds)] : []),
      ]),
    )
    .execute();
}

/**
 * Removes the person from the database, in the caller's transaction: the messages of their
 * threads keep their place (the conversation's shape, the reports) with no words, markup,
 * headers, send errors or files; the threads lose their preview, their CSAT comments and survey links;
 * handles, visitors, notifications of those threads, the raw deliveries and the outbound events
 * that carried them, and the stored answers of replies to them go.
 */
export async function eraseTraces(
  db: Executor,
  c: { id: number; workspaceId: number; appId: string },
  trace: Awaited<ReturnType<typeof traceOf>>,
  attachmentIds: number[],
): Promise<void> {
  const { threadIds, needles, visitorIds, messageIds } = trace;
  if (attachmentIds.length > 0) await db.deleteFrom('attachments').where('id', 'in', attachmentIds).execute();
  if (threadIds.length > 0) {
    await db
      .updateTable('messages')
      // A failed send's error is the provider's or mail server's words, which name the person
      // they could not reach ("undeliverable to +1555…", "550 <jane@…>: no such user").
      .set({ text: '', html: null, quoted_text: null, email: null, template: null, error: null })
      .where('thread_id', 'in', threadIds)
      .execute();
    // The trigger clears a vector only when the text changes; an empty text already erased
    // may still hold an old one.
    await sql`UPDATE messages SET search_vector = NULL WHERE thread_id = ANY(${threadIds}::bigint[]) AND search_vector IS NOT NULL`.execute(
      db,
    );
    await db.updateTable('threads').set({ last_message_preview: null }).where('id', 'in', threadIds).execute();
    // A CSAT comment is the person's words; the rating alone stays for the reports. The survey
    // link was the person's, like a visitor token: it names no survey any more.
    await db
      .updateTable('conversations')
      .set({ csat_comment: null, csat_token_hash: null })
      .where('thread_id', 'in', threadIds)
      .where((eb) => eb.or([eb('csat_comment', 'is not', null), eb('csat_token_hash', 'is not', null)]))
      .execute();
    await db.deleteFrom('notifications').where('thread_id', 'in', threadIds).execute();
  }
  if (visitorIds.length > 0) await db.deleteFrom('livechat_visitors').where('id', 'in', visitorIds).execute();
  await db.deleteFrom('contact_handles').where('contact_id', '=', c.id).execute();

  if (needles.length > 0) {
    // A connection's last send error (its health) may be a failed reply to the person, naming them.
    await sql`
      UPDATE connections SET last_error = NULL
      WHERE workspace_id = ${c.workspaceId} AND last_error IS NOT NULL
        AND EXISTS (SELECT 1 FROM unnest(${needles}::text[]) AS n WHERE strpos(last_error, n) > 0)`.execute(db);
    // Deliveries of this workspace's app, and those shared by several apps (app_id null).
    await sql`
      DELETE FROM webhook_inbox
      WHERE (app_id = ${c.appId} OR app_id IS NULL)
        AND EXISTS (
          SELECT 1 FROM unnest(${needles}::text[]) AS n
          WHERE strpos(raw_body, n) > 0
             OR strpos(COALESCE(payload_json::text, ''), n) > 0
             OR (raw_bytes IS NOT NULL AND position(convert_to(n, 'UTF8') IN raw_bytes) > 0))`.execute(db);
  }
  // The events that name the contact or its threads, with their deliveries and attempts. The
  // person is also every contact merged into this one (announced by contact.merged, in turn):
  // their own events, and those of their threads a merge folded away, whose messages are here.
  await deleteEvents(
    db,
    sql`
      WITH RECURSIVE events AS (
        SELECT id, type, body::jsonb -> 'data' AS data FROM webhook_events WHERE workspace_id = ${c.workspaceId}
      ), person(id) AS (
        SELECT ${c.id}::bigint
        UNION
        SELECT (e.data ->> 'mergedContactId')::bigint FROM events e JOIN person p ON (e.data -> 'contact' ->> 'id')::bigint = p.id
        WHERE e.type = 'contact.merged'
      )
      SELECT e.id FROM events e
      WHERE (e.type IN ('message.created', 'message.updated')
              AND ((e.data ->> 'threadId')::bigint = ANY(${threadIds}::bigint[]) OR (e.data ->> 'id')::bigint = ANY(${messageIds}::bigint[])))
         OR (e.type = 'csat.received'
              AND ((e.data ->> 'threadId')::bigint = ANY(${threadIds}::bigint[]) OR (e.data ->> 'contactId')::bigint IN (SELECT id FROM person)))
         OR (e.type IN ('thread.created', 'thread.updated', 'sla.warning', 'sla.breached')
              AND ((e.data ->> 'id')::bigint = ANY(${threadIds}::bigint[]) OR (e.data ->> 'contactId')::bigint IN (SELECT id FROM person)))
         OR (e.type IN ('contact.created', 'contact.updated') AND (e.data ->> 'id')::bigint IN (SELECT id FROM person))
         OR (e.type = 'contact.merged'
              AND ((e.data -> 'contact' ->> 'id')::bigint IN (SELECT id FROM person) OR (e.data ->> 'mergedContactId')::bigint IN (SELECT id FROM person)))`,
  );
  if (threadIds.length > 0) {
    // A stored answer (Idempotency-Key) is the Message a reply sent, or a new conversation's
    // `{thread, message}`; the thread it names may be one a merge folded, the message now here.
    await sql`
      DELETE FROM idempotency_keys
      WHERE app_id = ${c.appId}
        AND (COALESCE(response ->> 'threadId', response -> 'message' ->> 'threadId')::bigint = ANY(${threadIds}::bigint[])
          OR (response ? 'threadId' AND response ->> 'id' = ANY(${messageIds.map(String)}::text[]))
          OR response -> 'message' ->> 'id' = ANY(${messageIds.map(String)}::text[]))`.execute(db);
  }
}
