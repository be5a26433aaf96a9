import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as replyWindows from '../../migrations/0020_reply_windows.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

// This file's own clone of the migrated database: taking 0020 down and up again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;

describe('migration 0020_reply_windows', () => {
  it("backfills each thread's last inbound time from its stored messages", async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    const w = tenant.workspace.id;
    const thread = async (messages: { direction: 'inbound' | 'outbound'; at: string }[]) => {
      const contact = await db.insertInto('contacts').values({ workspace_id: w }).returning('id').executeTakeFirstOrThrow();
      const t = await db
        .insertInto('threads')
        .values({ workspace_id: w, connection_id: connection.id, contact_id: contact.id, last_message_preview: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const [i, m] of messages.entries()) {
        await db
          .insertInto('messages')
          .values({
            workspace_id: w,
            thread_id: t.id,
            connection_id: connection.id,
            direction: m.direction,
            external_id: `m-${t.id}-${i}`,
            text: 'x',
            status: m.direction === 'inbound' ? 'received' : 'sent',
            created_at: new Date(m.at),
          })
          .execute();
      }
      return t.id;
    };
    const written = await thread([
      { direction: 'inbound', at: '2026-02-01T10:00:00.000Z' },
      { direction: 'inbound', at: '2026-02-03T10:00:00.000Z' },
      // An agent's later reply is not the contact writing.
      { direction: 'outbound', at: '2026-02-04T10:00:00.000Z' },
    ]);
    const onlyReplies = await thread([{ direction: 'outbound', at: '2026-02-04T10:00:00.000Z' }]);

    const unknownDb = db as unknown as Kysely<unknown>;
    await replyWindows.down(unknownDb);
    await replyWindows.up(unknownDb);

    const rows = await db.selectFrom('threads').select(['id', 'last_inbound_at']).where('workspace_id', '=', w).orderBy('id').execute();
    expect(rows).toEqual([
      { id: written, last_inbound_at: new Date('2026-02-03T10:00:00.000Z') },
      { id: onlyReplies, last_inbound_at: null },
    ]);
  });
});
