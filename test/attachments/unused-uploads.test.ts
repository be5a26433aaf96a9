import { describe, expect, it } from 'vitest';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { uploadFile } from '../helpers/multipart.js';
import { seedMessage, seedThread } from '../helpers/threads.js';

const HOUR = 3_600_000;
let clock = new Date('2026-11-24T08:00:00Z');
const ctx = await useTestContext({ now: () => clock });
const tenant = await makeTenant(ctx.deps);

async function upload(name: string) {
  const { id } = await uploadFile(ctx.app, tenant.headers, { filename: name, bytes: Buffer.alloc(3000, name.charCodeAt(0)) });
  return ctx.deps.db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

const runMaintenance = () => maintenanceQueue.worker!.handle(ctx.deps, []);
const chunksOf = async (key: string | null) =>
  (await ctx.deps.db.selectFrom('attachment_chunks').select('seq').where('storage_key', '=', key!).execute()).length;

describe('unused uploads', () => {
  it('are deleted with their bytes 24 h after upload; one a message took stays', async () => {
    const unused = await upload('unused.bin');
    const used = await upload('used.bin');
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
    const message = await seedMessage(ctx.deps, thread, 'with a file');
    await ctx.deps.db.updateTable('attachments').set({ message_id: message.id }).where('id', '=', used.id).execute();
    expect(await chunksOf(unused.storage_key)).toBe(1);

    clock = new Date(clock.getTime() + 23 * HOUR);
    await runMaintenance();
    expect(await ctx.deps.db.selectFrom('attachments').select('id').where('id', '=', unused.id).executeTakeFirst()).toBeDefined();

    clock = new Date(clock.getTime() + 2 * HOUR);
    await runMaintenance();
    expect(await ctx.deps.db.selectFrom('attachments').select('id').where('id', '=', unused.id).executeTakeFirst()).toBeUndefined();
    expect(await chunksOf(unused.storage_key)).toBe(0);
    expect(await ctx.deps.db.selectFrom('attachments').select('id').where('id', '=', used.id).executeTakeFirst()).toBeDefined();
    expect(await chunksOf(used.storage_key)).toBe(1);
    const gone = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${unused.id}`, headers: tenant.headers });
    expect(gone.statusCode).toBe(404);
  });
});
