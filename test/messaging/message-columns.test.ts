import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MESSAGE_COLUMNS } from '../../src/db/message-columns.js';
import type { EmailHeaders } from '../../src/db/types.js';
import { threadView } from '../../src/messaging/apply-views.js';
import { type InboundMessageInput, insertInboundMessages, upsertThreads } from '../../src/messaging/messaging.queries.js';
import { indexUnindexed } from '../../src/threads/search-index.js';
import { listMessages } from '../../src/threads/threads.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();
const db = ctx.deps.db;

/** A workspace's connection and a thread of a new contact on it. */
async function newThread() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  const contact = await db.insertInto('contacts').values({ workspace_id: tenant.workspace.id }).returning('id').executeTakeFirstOrThrow();
  const thread = await db
    .insertInto('threads')
    .values({ workspace_id: tenant.workspace.id, connection_id: connection.id, contact_id: contact.id, last_message_preview: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { tenant, connection, thread };
}

describe('MESSAGE_COLUMNS', () => {
  it('names every column of messages but search_vector', async () => {
    const { rows } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns WHERE table_name = 'messages' AND table_schema = current_schema()`.execute(db);
    const columns = rows.map((r) => r.column_name).filter((c) => c !== 'search_vector');
    expect([...MESSAGE_COLUMNS].sort()).toEqual(columns.sort());
    expect(rows.map((r) => r.column_name)).toContain('search_vector');
  });

  it("keeps the search vector out of the inbound insert's rows and out of a thread's message list", async () => {
    const { tenant, connection, thread } = await newThread();
    const text = 'where is my order, please';
    const [row] = await insertInboundMessages(
      db,
      [
        {
          workspaceId: tenant.workspace.id,
          threadId: thread.id,
          connectionId: connection.id,
          externalId: 'wamid.cols',
          text,
          createdAt: new Date(),
        },
      ],
      new Date(),
    );
    expect(Object.keys(row!).sort()).toEqual([...MESSAGE_COLUMNS].sort());
    expect(row!.text).toBe(text);
    const page = await listMessages(db, thread.id, { limit: 10, cursor: undefined });
    expect(Object.keys(page.items[0]!).sort()).toEqual([...MESSAGE_COLUMNS].sort());
    // The vector is written after the batch, by the search indexer: search reads it.
    const vector = async () =>
      (await sql<{ v: string | null }>`SELECT search_vector::text AS v FROM messages WHERE id = ${row!.id}`.execute(db)).rows[0]!.v;
    expect(await vector()).toBeNull();
    await indexUnindexed(db, 10);
    expect(await vector()).toContain("'order'");
  });
});

describe('insertInboundMessages', () => {
  it('answers each new row as the table stores it, column for column and in order, mail or not', async () => {
    const { tenant, connection, thread } = await newThread();
    const base = {
      workspaceId: tenant.workspace.id,
      threadId: thread.id,
      connectionId: connection.id,
      createdAt: new Date('2026-11-27T12:00:00.5Z'),
    };
    const at = new Date('2026-11-27T12:00:01.25Z');
    const email: EmailHeaders = {
      messageId: '<m1@example.com>',
      inReplyTo: null,
      references: [],
      from: { email: 'a@example.com', name: 'Ana' },
      to: [{ email: 'b@example.com' }],
      cc: [],
      subject: 'Hi',
    };
    const batches: InboundMessageInput[][] = [
      [{ ...base, externalId: 'wamid.row-1', text: 'plain' }],
      [{ ...base, externalId: '<m1@example.com>', text: 'mail', email, html: '<p>mail</p>', quotedText: '> before' }],
    ];
    for (const batch of batches) {
      const inserted = await insertInboundMessages(db, batch, at);
      const stored = await db.selectFrom('messages').select(MESSAGE_COLUMNS).where('id', '=', inserted[0]!.id).executeTakeFirstOrThrow();
      expect(inserted).toStrictEqual([stored]);
      expect(Object.keys(inserted[0]!)).toEqual([...MESSAGE_COLUMNS]);
    }
  });
});

describe('threadView', () => {
  it("carries every column of the thread row the batch upsert returns, and the row's own fields", async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    const contact = await db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Ana' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const at = new Date('2026-11-27T12:00:00.123Z');
    const threads = await upsertThreads(
      db,
      [
        {
          workspaceId: tenant.workspace.id,
          connectionId: connection.id,
          contactId: contact.id,
          lastMessageAt: at,
          preview: 'hi',
          unread: 1,
          lastInboundAt: at,
          teamId: null,
        },
      ],
      at,
    );
    const [row] = [...threads.values()];
    const { rows } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns WHERE table_name = 'threads' AND table_schema = current_schema()`.execute(db);
    expect(Object.keys(row!).sort()).toEqual([...rows.map((r) => r.column_name), 'created', 'contact_name', 'team_routes'].sort());
    expect(threadView(row!, 'whatsapp')).toStrictEqual({ ...row!, integration_key: 'whatsapp' });
  });
});
