import { type Selectable, sql } from 'kysely';
import { handleLockKey, lockKeys } from '../db/advisory-locks.js';
import { arrayLiteral } from '../db/array-literal.js';
import { type Executor, PREPARED } from '../db/database.js';
import { messageColumnsSql } from '../db/message-columns.js';
import { packedParams, unpacked, withPackedTexts } from '../db/packed-texts.js';
import type { EmailHeaders, MessageStatus, MessagesTable, ThreadsTable } from '../db/types.js';
import { truncate } from '../text/truncate.js';

/** The pipeline's SQL: what applying inbound events writes, set-based (contacts, threads, messages, receipts). */

export interface ConnectionRef {
  id: number;
  workspace_id: number;
  integration_key: string;
  external_account_id: string;
  app_id: string;
  /** New and reopened threads of the connection are assigned automatically. */
  auto_assign: boolean;
  /** The team a new thread of the connection belongs to; null = none. */
  team_id: number | null;
  /** The workspace has an enabled SLA policy: the batch moves SLA clocks (docs/sla.md). */
  sla: boolean;
  /** The text that answers a contact writing outside business hours; null = off. */
  away_message: string | null;
}

/** Connections (with their app id) for a set of (integration key, account id) pairs. */
export async function findConnectionsByAccount(
  db: Executor,
  keys: { integrationKey: string; externalAccountId: string }[],
): Promise<ConnectionRef[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<ConnectionRef>`${PREPARED}
    SELECT c.id, c.workspace_id, c.integration_key, c.external_account_id, w.app_id, c.auto_assign, c.team_id, c.away_message,
      EXISTS (SELECT 1 FROM sla_policies p WHERE p.workspace_id = c.workspace_id AND p.enabled) AS sla
    FROM connections c
    JOIN workspaces w ON w.id = c.workspace_id
    JOIN unnest(${arrayLiteral(keys.map((k) => k.integrationKey))}::text[], ${arrayLiteral(keys.map((k) => k.externalAccountId))}::text[]) AS k(integration_key, external_account_id)
      ON c.integration_key = k.integration_key AND c.external_account_id = k.external_account_id
    WHERE c.deleted_at IS NULL`.execute(db);
  return rows;
}

/** Outbound messages sent through `integrationKey` with these provider ids, with their connection. */
export async function findOutboundByExternalId(db: Executor, integrationKey: string, externalIds: string[]) {
  if (externalIds.length === 0) return [];
  const { rows } = await sql<{ external_id: string; connection_id: number; external_account_id: string; app_id: string }>`
    SELECT m.external_id, m.connection_id, c.external_account_id, w.app_id
    FROM messages m
    JOIN connections c ON c.id = m.connection_id
    JOIN workspaces w ON w.id = m.workspace_id
    WHERE m.external_id = ANY(${arrayLiteral(externalIds)}::text[]) AND m.direction = 'outbound' AND c.integration_key = ${integrationKey}`.execute(
    db,
  );
  return rows;
}

export interface HandleInput {
  workspaceId: number;
  integrationKey: string;
  externalId: string;
  name: string | null;
}

/**
 * Finds or creates the contact of every handle, in one round of statements. Handles are
 * locked (transaction-scoped advisory locks, taken in a fixed order) so two workers never
 * create the same contact twice. Returns `workspace|key|externalId` → contact id, and the
 * contacts this call created.
 */
export async function upsertContacts(
  db: Executor,
  handles: HandleInput[],
  at: Date,
): Promise<{ ids: Map<string, number>; created: (HandleInput & { id: number })[] }> {
  const result = new Map<string, number>();
  const created: (HandleInput & { id: number })[] = [];
  if (handles.length === 0) return { ids: result, created };
  const keyOf = (h: { workspaceId: number; integrationKey: string; externalId: string }) =>
    handleLockKey(h.workspaceId, h.integrationKey, h.externalId);
  // Each handle's key is written once: a key built again for every lookup was the function's
  // largest cost (a new string, hashed anew by each Map it is looked up in).
  const handleKeys = handles.map(keyOf);
  await lockKeys(db, [...new Set(handleKeys)]);

  const { rows: existing } = await sql<{
    workspace_id: number;
    integration_key: string;
    external_id: string;
    contact_id: number;
  }>`${PREPARED}
    SELECT h.workspace_id, h.integration_key, h.external_id, h.contact_id
    FROM contact_handles h
    JOIN unnest(${arrayLiteral(handles.map((h) => h.workspaceId))}::int[], ${arrayLiteral(handles.map((h) => h.integrationKey))}::text[], ${arrayLiteral(handles.map((h) => h.externalId))}::text[])
      AS k(workspace_id, integration_key, external_id)
      ON h.workspace_id = k.workspace_id AND h.integration_key = k.integration_key AND h.external_id = k.external_id`.execute(db);
  for (const r of existing)
    result.set(keyOf({ workspaceId: r.workspace_id, integrationKey: r.integration_key, externalId: r.external_id }), r.contact_id);

  const missing = new Map<string, HandleInput>();
  handles.forEach((h, i) => {
    const key = handleKeys[i]!;
    if (!result.has(key) && !missing.has(key)) missing.set(key, h);
  });
  const named = [...missing.values()];
  const namedKeys = [...missing.keys()];
  if (named.length > 0) {
    // Ids are drawn first so each new contact can be paired with its handle.
    const { rows: ids } = await sql<{ id: number }>`
      SELECT nextval(pg_get_serial_sequence('contacts', 'id')) AS id FROM generate_series(1, ${named.length})`.execute(db);
    const contactIds = ids.map((r) => r.id);
    await sql`
      INSERT INTO contacts (id, workspace_id, name, created_at, updated_at) OVERRIDING SYSTEM VALUE
      SELECT * , ${at}::timestamptz, ${at}::timestamptz FROM unnest(${arrayLiteral(contactIds)}::bigint[], ${arrayLiteral(named.map((h) => h.workspaceId))}::int[], ${arrayLiteral(named.map((h) => h.name))}::text[])`.execute(
      db,
    );
    await sql`
      INSERT INTO contact_handles (contact_id, workspace_id, integration_key, external_id)
      SELECT * FROM unnest(${arrayLiteral(contactIds)}::bigint[], ${arrayLiteral(named.map((h) => h.workspaceId))}::int[], ${arrayLiteral(named.map((h) => h.integrationKey))}::text[], ${arrayLiteral(named.map((h) => h.externalId))}::text[])`.execute(
      db,
    );
    named.forEach((h, i) => {
      result.set(namedKeys[i]!, contactIds[i]!);
      created.push({ ...h, id: contactIds[i]! });
    });
  }
  // A name learned later fills in a contact that had none.
  const namedIds: number[] = [];
  const names: string[] = [];
  handles.forEach((h, i) => {
    if (!h.name) return;
    namedIds.push(result.get(handleKeys[i]!)!);
    names.push(h.name);
  });
  if (names.length > 0) {
    await sql`${PREPARED}
      UPDATE contacts c SET name = v.name, updated_at = ${at}
      FROM unnest(${arrayLiteral(namedIds)}::bigint[], ${arrayLiteral(names)}::text[]) AS v(id, name)
      WHERE c.id = v.id AND c.name IS NULL`.execute(db);
  }
  return { ids: result, created };
}

export interface ThreadInput {
  workspaceId: number;
  connectionId: number;
  contactId: number;
  /** The conversation on an e-mail connection (its opening Message-ID); '' (the default) elsewhere. */
  conversationKey?: string;
  lastMessageAt: Date;
  /** null: a conversation opened without a message, which leaves the preview as it is. */
  preview: string | null;
  /** Inbound messages this input brings: added to the thread's unread count. */
  unread: number;
  /**
   * The provider's timestamp of the latest inbound message this input brings, moved forward
   * only: where the thread's reply window starts. Absent or null: no inbound message.
   */
  lastInboundAt?: Date | null;
  /** The team of the connection, which a thread this input creates joins (an existing thread keeps its own). */
  teamId: number | null;
}

/** A thread as an upsert returns it, with its contact's name (what the thread's announcement shows). */
export type ThreadRow = Selectable<ThreadsTable> & { created: boolean; contact_name: string | null; team_routes: boolean };

/**
 * Read with a returned thread row `t` in the same statement: the contact's name, and whether
 * the thread's team routes its threads (so a batch needs no statement more to know).
 */
const CONTACT_NAME = sql`(SELECT c.name FROM contacts c WHERE c.id = t.contact_id) AS contact_name,
  CASE WHEN t.team_id IS NULL THEN false ELSE COALESCE((SELECT tm.auto_assign FROM teams tm WHERE tm.id = t.team_id), false) END AS team_routes`;

/** A thread's key in what upsertThreads answers: one per (connection, contact, conversation). */
export function threadKey(connectionId: number, contactId: number, conversationKey = ''): string {
  return `${connectionId}|${contactId}|${conversationKey}`;
}

/** The later of two optional times (GREATEST's rule: null loses). */
function latestOf(a: Date | null | undefined, b: Date | null | undefined): Date | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a >= b ? a : b;
}

/**
 * Upserts the one thread of every (connection, contact, conversation key), whatever its status, moving
 * `last_message_at` and the preview forward only and adding the inputs' `unread` to its
 * unread count (see `uncountUnread` for the messages that turn out to be stored already). Returns `connectionId|contactId` → the
 * thread, `created` when this call inserted it. The row stays locked until the transaction
 * ends, so its status and assignee as returned are the ones the caller may act on.
 */
export async function upsertThreads(db: Executor, threads: ThreadInput[], at: Date): Promise<Map<string, ThreadRow>> {
  const byKey = new Map<string, ThreadInput>();
  for (const t of threads) {
    const k = threadKey(t.connectionId, t.contactId, t.conversationKey);
    const seen = byKey.get(k);
    const unread = t.unread + (seen?.unread ?? 0);
    const lastInboundAt = latestOf(t.lastInboundAt, seen?.lastInboundAt);
    byKey.set(k, !seen || seen.lastMessageAt <= t.lastMessageAt ? { ...t, unread, lastInboundAt } : { ...seen, unread, lastInboundAt });
  }
  const list = [...byKey.values()];
  const result = new Map<string, ThreadRow>();
  if (list.length === 0) return result;
  // Only a batch with e-mail conversations sends their keys; every other takes the column's
  // default '' and costs no array more (docs/performance.md: other deliveries' cost stays flat).
  const keyed = list.some((t) => t.conversationKey);
  const keys = keyed ? sql`, ${arrayLiteral(list.map((t) => t.conversationKey ?? ''))}::text[]` : sql``;
  // xmax is 0 on a row version this statement inserted, and set on one it updated.
  const { rows } = await sql<ThreadRow>`
    INSERT INTO threads AS t (workspace_id, connection_id, contact_id, last_message_at, last_message_preview, unread_count, conversation_messages_in, last_inbound_at, team_id, created_at, updated_at${keyed ? sql`, conversation_key` : sql``})
    SELECT w, cn, ct, lm, p, u, u, li, tm, ${at}::timestamptz, ${at}::timestamptz${keyed ? sql`, k` : sql``}
    FROM unnest(${arrayLiteral(list.map((t) => t.workspaceId))}::int[], ${arrayLiteral(list.map((t) => t.connectionId))}::bigint[], ${arrayLiteral(list.map((t) => t.contactId))}::bigint[],
                ${arrayLiteral(list.map((t) => t.lastMessageAt))}::timestamptz[], ${arrayLiteral(list.map((t) => t.preview))}::text[], ${arrayLiteral(list.map((t) => t.unread))}::int[],
                ${arrayLiteral(list.map((t) => t.lastInboundAt ?? null))}::timestamptz[], ${arrayLiteral(list.map((t) => t.teamId))}::int[]${keys}) AS v(w, cn, ct, lm, p, u, li, tm${keyed ? sql`, k` : sql``})
    ORDER BY cn, ct${keyed ? sql`, k` : sql``}
    ON CONFLICT (connection_id, contact_id, conversation_key) DO UPDATE SET
      unread_count = t.unread_count + excluded.unread_count,
      conversation_messages_in = t.conversation_messages_in + excluded.conversation_messages_in,
      last_message_preview = CASE WHEN excluded.last_message_at >= t.last_message_at THEN COALESCE(excluded.last_message_preview, t.last_message_preview) ELSE t.last_message_preview END,
      last_message_at = GREATEST(t.last_message_at, excluded.last_message_at),
      last_inbound_at = GREATEST(t.last_inbound_at, excluded.last_inbound_at),
      updated_at = excluded.updated_at
    RETURNING t.*, (t.xmax = 0) AS created, ${CONTACT_NAME}`.execute(db);
  for (const r of rows) result.set(threadKey(r.connection_id, r.contact_id, r.conversation_key), r);
  return result;
}

/**
 * Takes back unread counts that upsertThreads added for messages the insert then skipped (a
 * provider's retry of a message already stored). Rare: the common batch never calls it.
 */
export async function uncountUnread(db: Executor, corrections: { threadId: number; n: number }[]) {
  if (corrections.length === 0) return;
  await sql`
    UPDATE threads t SET unread_count = greatest(t.unread_count - v.n, 0),
      conversation_messages_in = greatest(t.conversation_messages_in - v.n, 0)
    FROM unnest(${arrayLiteral(corrections.map((c) => c.threadId))}::bigint[], ${arrayLiteral(corrections.map((c) => c.n))}::int[]) AS v(id, n)
    WHERE t.id = v.id`.execute(db);
}

/**
 * The thread of each known message among `refs` (by connection and provider id, either
 * direction), with that thread's contact: `connectionId|externalId` → thread. What an
 * e-mail's In-Reply-To/References name, to join the conversation they belong to.
 */
export async function findThreadsOfMessages(db: Executor, refs: { connectionId: number; externalId: string }[]) {
  const result = new Map<string, { threadId: number; contactId: number }>();
  if (refs.length === 0) return result;
  const { rows } = await sql<{ connection_id: number; external_id: string; thread_id: number; contact_id: number }>`
    SELECT m.connection_id, m.external_id, m.thread_id, t.contact_id
    FROM messages m
    JOIN unnest(${arrayLiteral(refs.map((r) => r.connectionId))}::bigint[], ${arrayLiteral(refs.map((r) => r.externalId))}::text[]) AS k(connection_id, external_id)
      ON m.connection_id = k.connection_id AND m.external_id = k.external_id
    JOIN threads t ON t.id = m.thread_id`.execute(db);
  for (const r of rows)
    result.set(`${r.connection_id}|${r.external_id}`, { threadId: Number(r.thread_id), contactId: Number(r.contact_id) });
  return result;
}

/**
 * Moves known threads' `last_message_at` and preview forward for messages that joined them
 * by reference, as upsertThreads does for a contact's thread: last message, preview, last
 * inbound message and unread count (one per message; every touch is an inbound message).
 * Returns the threads as they are now.
 */
export async function touchThreads(
  db: Executor,
  touches: { threadId: number; lastMessageAt: Date; preview: string }[],
  at: Date,
): Promise<ThreadRow[]> {
  if (touches.length === 0) return [];
  const latest = new Map<number, (typeof touches)[number] & { unread: number }>();
  for (const t of touches) {
    const seen = latest.get(t.threadId);
    const unread = (seen?.unread ?? 0) + 1;
    latest.set(t.threadId, !seen || seen.lastMessageAt <= t.lastMessageAt ? { ...t, unread } : { ...seen, unread });
  }
  const list = [...latest.values()];
  const { rows } = await sql<ThreadRow>`
    UPDATE threads AS t SET
      unread_count = t.unread_count + v.u,
      conversation_messages_in = t.conversation_messages_in + v.u,
      last_message_preview = CASE WHEN v.lm >= t.last_message_at THEN v.p ELSE t.last_message_preview END,
      last_message_at = GREATEST(t.last_message_at, v.lm),
      last_inbound_at = GREATEST(t.last_inbound_at, v.lm),
      updated_at = ${at}
    FROM unnest(${arrayLiteral(list.map((t) => t.threadId))}::bigint[], ${arrayLiteral(list.map((t) => t.lastMessageAt))}::timestamptz[], ${arrayLiteral(list.map((t) => t.preview))}::text[],
                ${arrayLiteral(list.map((t) => t.unread))}::int[]) AS v(id, lm, p, u)
    WHERE t.id = v.id
    RETURNING t.*, false AS created, ${CONTACT_NAME}`.execute(db);
  return rows;
}

export interface InboundMessageInput {
  workspaceId: number;
  threadId: number;
  connectionId: number;
  externalId: string;
  text: string;
  createdAt: Date;
  email?: EmailHeaders | null;
  html?: string | null;
  quotedText?: string | null;
}

/** What the inbound insert reads back of each new row: what it did not write itself as a constant or a default. */
interface InsertedInbound {
  id: number;
  workspace_id: number;
  thread_id: number;
  connection_id: number;
  external_id: string | null;
  created_at: Date;
  updated_at: Date;
  email?: EmailHeaders | null;
  html?: string | null;
  quoted_text?: string | null;
}

/**
 * A new inbound message's row, every column of MESSAGE_COLUMNS in its order: those the insert
 * wrote as constants (direction, status) or from the batch's own values (the text), or left to
 * their defaults, are filled in here rather than read back. node-postgres makes each row by
 * spreading an object of its columns, and V8 makes a spread of twenty or more properties as a
 * hash table: a row of seven columns and this object cost less than the 23 columns read back. The message-columns test holds it to the row
 * as the table stores it.
 */
function inboundRow(r: InsertedInbound, text: string): Selectable<MessagesTable> {
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    thread_id: r.thread_id,
    connection_id: r.connection_id,
    direction: 'inbound',
    external_id: r.external_id,
    text,
    status: 'received',
    error: null,
    kind: 'message',
    private: false,
    author_id: null,
    ai: false,
    automation: false,
    created_at: r.created_at,
    updated_at: r.updated_at,
    send_claim_token: null,
    send_claimed_at: null,
    send_attempt: 0,
    template: null,
    mentions: null,
    email: r.email ?? null,
    html: r.html ?? null,
    quoted_text: r.quoted_text ?? null,
  };
}

/** Inserts inbound messages; one already stored (same connection and provider id) is skipped. */
export async function insertInboundMessages(db: Executor, messages: InboundMessageInput[], at: Date): Promise<Selectable<MessagesTable>[]> {
  if (messages.length === 0) return [];
  // Only a batch with e-mail sends their headers, HTML and quotes (see upsertThreads).
  const mail = messages.some((m) => m.email || m.html || m.quotedText);
  const mailArrays = mail
    ? sql`, ${arrayLiteral(messages.map((m) => (m.email ? JSON.stringify(m.email) : null)))}::jsonb[], ${arrayLiteral(messages.map((m) => m.html ?? null))}::text[],
                ${arrayLiteral(messages.map((m) => m.quotedText ?? null))}::text[]`
    : sql``;
  const { rows } = await withPackedTexts(
    messages.map((m) => m.text),
    (packed) => {
      const { bytes, starts, lengths } = packedParams(packed);
      return sql<InsertedInbound>`${PREPARED}
    INSERT INTO messages (workspace_id, thread_id, connection_id, direction, external_id, text, status, created_at, updated_at${mail ? sql`, email, html, quoted_text` : sql``})
    SELECT w, th, cn, 'inbound', e, ${unpacked(bytes, 's', 'l')}, 'received', c, ${at}::timestamptz${mail ? sql`, em, h, q` : sql``}
    FROM unnest(${arrayLiteral(messages.map((m) => m.workspaceId))}::int[], ${arrayLiteral(messages.map((m) => m.threadId))}::bigint[], ${arrayLiteral(messages.map((m) => m.connectionId))}::bigint[],
                ${arrayLiteral(messages.map((m) => m.externalId))}::text[], ${starts}, ${lengths}, ${arrayLiteral(messages.map((m) => m.createdAt))}::timestamptz[]${mailArrays})
      WITH ORDINALITY AS v(w, th, cn, e, s, l, c${mail ? sql`, em, h, q` : sql``}, n)
    ORDER BY cn, e, n
    ON CONFLICT (connection_id, external_id) DO NOTHING
    RETURNING id, workspace_id, thread_id, connection_id, external_id, created_at, updated_at${mail ? sql`, email, html, quoted_text` : sql``}`.execute(
        db,
      );
    },
  );
  // The text is not read back: it is the one of the first input with the row's key (the
  // insert's order), and a text read back is a copy of every message's body.
  const texts = new Map<string, string>();
  for (const m of messages) {
    const key = `${m.connectionId}|${m.externalId}`;
    if (!texts.has(key)) texts.set(key, m.text);
  }
  return rows.map((r) => inboundRow(r, texts.get(`${r.connection_id}|${r.external_id}`)!));
}

export interface StatusInput {
  connectionId: number;
  externalId: string;
  status: Exclude<MessageStatus, 'received' | 'queued'>;
  error: string | null;
}

/**
 * Applies delivery receipts to outbound messages. A status never moves backwards
 * (queued < sent < delivered < read; `read` implies delivered, so a late `delivered` changes
 * nothing), and `failed` is taken only before delivery and keeps the provider's error.
 */
/**
 * The longest provider error text a message keeps (docs/replies.md). Besides bounding the
 * column, it keeps the `message.updated` event that carries it far below NOTIFY's 8000 bytes.
 */
export const PROVIDER_ERROR_MAX_LENGTH = 1000;

export async function applyStatuses(db: Executor, statuses: StatusInput[], at: Date) {
  if (statuses.length === 0) return [];
  const { rows } = await sql<Selectable<MessagesTable>>`
    UPDATE messages AS m
    SET status = v.status, error = CASE WHEN v.status = 'failed' THEN v.error ELSE m.error END, updated_at = ${at}
    FROM unnest(${arrayLiteral(statuses.map((s) => s.connectionId))}::bigint[], ${arrayLiteral(statuses.map((s) => s.externalId))}::text[],
                ${arrayLiteral(statuses.map((s) => s.status))}::text[], ${arrayLiteral(statuses.map((s) => (s.error === null ? null : truncate(s.error, PROVIDER_ERROR_MAX_LENGTH))))}::text[]) AS v(connection_id, external_id, status, error)
    WHERE m.connection_id = v.connection_id AND m.external_id = v.external_id AND m.direction = 'outbound'
      AND (
        (v.status = 'failed' AND m.status IN ('queued', 'sent'))
        OR (v.status <> 'failed' AND m.status <> 'failed' AND
            array_position(ARRAY['queued','sent','delivered','read'], m.status) < array_position(ARRAY['queued','sent','delivered','read'], v.status))
      )
    RETURNING ${messageColumnsSql('m')}`.execute(db);
  return rows;
}
