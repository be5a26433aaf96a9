import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { threadKey, upsertThreads } from '../../src/messaging/messaging.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();

describe('the indexes of threads', () => {
  it('keep one thread per connection, contact and conversation, and find a contact’s threads, with one index', async () => {
    const tenant = await makeTenant(ctx.deps);
    const a = await makeConnection(ctx.deps, tenant.workspace.id);
    const b = await makeConnection(ctx.deps, tenant.workspace.id);
    const contact = await ctx.deps.db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Ada' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const at = new Date();
    const input = (connectionId: number) => ({
      workspaceId: tenant.workspace.id,
      connectionId,
      contactId: contact.id,
      lastMessageAt: at,
      preview: 'hi',
      unread: 1,
      teamId: null,
    });
    const first = await upsertThreads(ctx.deps.db, [input(a.id), input(b.id)], at);
    const again = await upsertThreads(ctx.deps.db, [input(a.id)], at);
    expect(again.get(threadKey(a.id, contact.id))).toMatchObject({
      id: first.get(threadKey(a.id, contact.id))!.id,
      created: false,
      unread_count: 2,
    });
    await expect(
      ctx.deps.db
        .insertInto('threads')
        .values({ workspace_id: tenant.workspace.id, connection_id: b.id, contact_id: contact.id })
        .execute(),
    ).rejects.toThrow(/threads_conversation_key/);

    // Every inbound message updates its thread outside HOT, writing an entry in each of the
    // table's indexes: the unique pair leads with the contact, so it also serves the reads by
    // contact and no second index on contact_id is written.
    const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'threads' AND indexdef LIKE '%(contact_id%'`.execute(ctx.deps.db);
    expect(indexes).toEqual([
      {
        indexname: 'threads_conversation_key',
        indexdef: expect.stringContaining(
          'UNIQUE INDEX threads_conversation_key ON public.threads USING btree (contact_id, connection_id, conversation_key)',
        ),
      },
    ]);
    const plan = await ctx.deps.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN SELECT id FROM threads WHERE contact_id = ${contact.id}`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('threads_conversation_key');
  });
});
