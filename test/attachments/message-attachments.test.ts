import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { contentUrl } from '../../src/attachments/attachments.resources.js';
import { messageResources } from '../../src/attachments/message-attachments.js';
import { StorageUnavailableError } from '../../src/attachments/storage.js';
import { announce } from '../../src/messaging/announce.js';
import { REALTIME_CHANNEL } from '../../src/realtime/publish.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { multipartBody, PNG_1X1, uploadFile } from '../helpers/multipart.js';
import { seedMessage, seedThread } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

const PUBLIC_URL = 'https://inbox.example.test';
const ctx = await useTestContext({ env: { INBOX_PUBLIC_URL: PUBLIC_URL } });
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id);
const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });

const upload = (bytes: Buffer | string, filename: string) => uploadFile(ctx.app, tenant.headers, { filename, bytes });

/** A message of the seeded thread carrying a stored upload and a pending inbound file. */
async function messageWithFiles(text: string) {
  const message = await seedMessage(ctx.deps, thread, text);
  const stored = await upload(PNG_1X1, 'photo.png');
  await ctx.deps.db.updateTable('attachments').set({ message_id: message.id }).where('id', '=', stored.id).execute();
  const pending = await ctx.deps.db
    .insertInto('attachments')
    .values({ workspace_id: tenant.workspace.id, message_id: message.id, kind: 'audio', status: 'pending', filename: 'voice.ogg' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { message, storedId: stored.id, pendingId: pending.id };
}

const expectedFiles = (f: { message: { id: number }; storedId: number; pendingId: number }) => [
  {
    id: f.storedId,
    messageId: f.message.id,
    kind: 'image',
    contentType: 'image/png',
    filename: 'photo.png',
    size: PNG_1X1.byteLength,
    status: 'stored',
    error: null,
    url: `${PUBLIC_URL}/v1/attachments/${f.storedId}/content`,
  },
  {
    id: f.pendingId,
    messageId: f.message.id,
    kind: 'audio',
    contentType: 'application/octet-stream',
    filename: 'voice.ogg',
    size: null,
    status: 'pending',
    error: null,
    url: `${PUBLIC_URL}/v1/attachments/${f.pendingId}/content`,
  },
];

describe('attachments on messages', () => {
  it('are on every Message a list answers: the transcript, search, the operator transcript', async () => {
    const files = await messageWithFiles('invoice photo attached');
    const plain = await seedMessage(ctx.deps, thread, 'no files here');

    const list = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${thread.id}/messages`, headers: tenant.headers });
    const byId = new Map((list.json().data as { id: number; attachments: unknown[] }[]).map((m) => [m.id, m.attachments]));
    expect(byId.get(files.message.id)).toEqual(expectedFiles(files));
    expect(byId.get(plain.id)).toEqual([]);

    const search = await ctx.app.inject({ method: 'GET', url: '/v1/messages/search?q=invoice', headers: tenant.headers });
    expect(search.json().data).toEqual([expect.objectContaining({ id: files.message.id, attachments: expectedFiles(files) })]);

    const operator = await ctx.app.inject({
      method: 'GET',
      url: `/v1/operator/tenants/${tenant.workspace.id}/threads/${thread.id}/messages`,
      headers: adminHeaders(),
    });
    expect(operator.statusCode, operator.body).toBe(200);
    expect(operator.json().data.find((m: { id: number }) => m.id === files.message.id).attachments).toEqual(expectedFiles(files));
  });

  it('are read in one query for a whole page, however many messages it holds', async () => {
    const rows = [];
    for (let i = 0; i < 4; i++) rows.push((await messageWithFiles(`page ${i}`)).message);
    let queries = 0;
    const counting = ctx.deps.db.withPlugin({
      transformQuery: (args) => {
        queries++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const messages = await messageResources(counting, rows, contentUrl(PUBLIC_URL));
    expect(queries).toBe(1);
    expect(messages.map((m) => m.attachments.length)).toEqual([2, 2, 2, 2]);
  });

  it('travel with message.created and message.updated: whole to endpoints, ids and states to agents', async () => {
    const endpoint = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'https://receiver.example.com/hook', events: ['message.updated'] },
    });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const files = await messageWithFiles('for the event');
    const listener = new pg.Client({ connectionString: ctx.database.url });
    await listener.connect();
    const events: { type: string; data: Record<string, unknown> }[] = [];
    listener.on('notification', (n) => events.push(JSON.parse(n.payload!)));
    await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
    try {
      const row = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', files.message.id).executeTakeFirstOrThrow();
      await ctx.deps.db.transaction().execute((trx) => announce(ctx.deps, trx, [{ type: 'message.updated', message: row }], new Date()));
      const event = await waitFor(async () => events.find((e) => e.type === 'message.updated' && e.data.id === row.id), 'message.updated');
      expect(event.data.attachments).toEqual([
        { id: files.storedId, kind: 'image', contentType: 'image/png', status: 'stored' },
        { id: files.pendingId, kind: 'audio', contentType: 'application/octet-stream', status: 'pending' },
      ]);
    } finally {
      await listener.end();
    }
    const sent = await ctx.deps.db
      .selectFrom('webhook_events')
      .select('body')
      .where('workspace_id', '=', tenant.workspace.id)
      .where('type', '=', 'message.updated')
      .execute();
    const bodies = sent.map((e) => JSON.parse(e.body) as { data: { id: number; attachments: unknown } });
    expect(bodies.find((b) => b.data.id === files.message.id)?.data.attachments).toEqual(expectedFiles(files));
  });

  it('an upload while storage is down answers 503 and leaves no row', async () => {
    const storage = ctx.deps.storage;
    const before = await ctx.deps.db.selectFrom('attachments').select('id').execute();
    ctx.deps.storage = {
      ...storage,
      async put(_key, body) {
        for await (const _piece of body) throw new StorageUnavailableError('the bucket is not answering');
        throw new StorageUnavailableError('the bucket is not answering');
      },
    };
    try {
      const body = multipartBody({ filename: 'a.png', bytes: PNG_1X1 });
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/attachments',
        headers: { ...tenant.headers, ...body.headers },
        payload: body.payload,
      });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toEqual({ code: 'unavailable', message: expect.stringMatching(/storage is unavailable/) });
    } finally {
      ctx.deps.storage = storage;
    }
    expect(await ctx.deps.db.selectFrom('attachments').select('id').execute()).toEqual(before);
  });
});
