import { describe, expect, it } from 'vitest';
import { maintenanceQueue } from '../../src/maintenance/maintenance.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody, uploadFile } from '../helpers/multipart.js';
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

  it("a live chat visitor's upload not sent within 1 h is deleted; a tenant's waits its 24 h", async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const visitor = await startVisitor(ctx.app, widget.key);
    const body = multipartBody({ filename: 'visitor.bin', bytes: Buffer.alloc(3000, 9) });
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/livechat/${widget.key}/attachments`,
      headers: { ...visitor.headers, ...body.headers },
      payload: body.payload,
    });
    expect(res.statusCode, res.body).toBe(201);
    const visitors = await ctx.deps.db.selectFrom('attachments').selectAll().where('id', '=', res.json().data.id).executeTakeFirstOrThrow();
    const tenants = await upload('tenant.bin');
    const exists = async (id: number) =>
      (await ctx.deps.db.selectFrom('attachments').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

    clock = new Date(clock.getTime() + 59 * 60_000);
    await runMaintenance();
    expect([await exists(visitors.id), await exists(tenants.id)]).toEqual([true, true]);

    clock = new Date(clock.getTime() + 2 * 60_000);
    await runMaintenance();
    expect([await exists(visitors.id), await exists(tenants.id)]).toEqual([false, true]);
    expect(await chunksOf(visitors.storage_key)).toBe(0);
    expect(await chunksOf(tenants.storage_key)).toBe(1);
  });
});
