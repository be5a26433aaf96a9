import { describe, expect, it } from 'vitest';
import { pruneOldConversations } from '../../src/maintenance/conversation-retention.js';
import { useTestContext } from '../helpers/app.js';
import { someBytes, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread } from '../helpers/threads.js';

const ctx = await useTestContext();
const db = ctx.deps.db;
const DAY = 24 * 3_600_000;
const now = new Date();
const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);

async function workspaceKeeping(days: number | null) {
  const tenant = await makeTenant(ctx.deps);
  if (days !== null) {
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/workspace',
      headers: tenant.headers,
      payload: { conversationRetentionDays: days },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.conversationRetentionDays).toBe(days);
  }
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  return { tenant, connection: { ...connection, workspaceId: tenant.workspace.id } };
}

/** A thread whose last message and last change were `silent` and `touched` days ago. */
async function thread(connection: { id: number; workspaceId: number }, status: 'resolved' | 'open', silent: number, touched = silent) {
  const t = await seedThread(ctx.deps, connection, { status, lastMessageAt: daysAgo(silent) });
  const m = await seedMessage(ctx.deps, t, 'hello', { createdAt: daysAgo(silent) });
  await db
    .updateTable('threads')
    .set({ updated_at: daysAgo(touched) })
    .where('id', '=', t.id)
    .execute();
  return { ...t, messageId: m.id };
}

const exists = async (id: number) => (await db.selectFrom('threads').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

describe('conversationRetentionDays', () => {
  it('is a whole number of days from 1, or null', async () => {
    const tenant = await makeTenant(ctx.deps);
    for (const bad of [0, -1, 1.5, '30', 36501]) {
      const res = await ctx.app.inject({
        method: 'PATCH',
        url: '/v1/workspace',
        headers: tenant.headers,
        payload: { conversationRetentionDays: bad },
      });
      expect(res.statusCode, String(bad)).toBe(422);
    }
    const got = await ctx.app.inject({ method: 'GET', url: '/v1/workspace', headers: tenant.headers });
    expect(got.json().data.conversationRetentionDays).toBeNull();
  });

  it('deletes resolved threads silent for longer, with their messages and files; keeps the rest', async () => {
    const { connection } = await workspaceKeeping(30);
    const { connection: keepsAll } = await workspaceKeeping(null);
    const old = await thread(connection, 'resolved', 40);
    const bytes = someBytes(2000);
    const fileId = await storeUpload(ctx.deps, connection.workspaceId, { bytes, contentType: 'image/png', kind: 'image' });
    await db.updateTable('attachments').set({ message_id: old.messageId }).where('id', '=', fileId).execute();
    const key = (await db.selectFrom('attachments').select('storage_key').where('id', '=', fileId).executeTakeFirstOrThrow()).storage_key!;
    const stillOpen = await thread(connection, 'open', 40);
    const recent = await thread(connection, 'resolved', 20);
    const touchedLately = await thread(connection, 'resolved', 40, 5);
    const otherWorkspace = await thread(keepsAll, 'resolved', 400);

    expect(await pruneOldConversations(ctx.deps, now)).toEqual({ deleted: 1, more: false });
    expect(await exists(old.id)).toBe(false);
    expect(await db.selectFrom('messages').select('id').where('thread_id', '=', old.id).execute()).toEqual([]);
    expect(await db.selectFrom('attachments').select('id').where('id', '=', fileId).execute()).toEqual([]);
    expect(await ctx.deps.storage.get(key)).toBeUndefined();
    // The person stays a contact of the workspace.
    expect(await db.selectFrom('contacts').select('id').where('id', '=', old.contact_id).executeTakeFirst()).toBeDefined();
    for (const kept of [stillOpen, recent, touchedLately, otherWorkspace]) expect(await exists(kept.id)).toBe(true);
  });

  it('works in batches, leaving what one run may not take for the next', async () => {
    const { connection } = await workspaceKeeping(1);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await thread(connection, 'resolved', 3)).id);
    const limits = { batchSize: 2, maxBatches: 2 };
    expect(await pruneOldConversations(ctx.deps, now, limits)).toEqual({ deleted: 4, more: true });
    expect(await pruneOldConversations(ctx.deps, now, limits)).toEqual({ deleted: 1, more: false });
    for (const id of ids) expect(await exists(id)).toBe(false);
  });
});
