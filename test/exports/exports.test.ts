import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CHUNK_BYTES } from '../../src/attachments/postgres-storage.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { pruneExpiredExports } from '../../src/exports/exports.js';
import { useTestContext } from '../helpers/app.js';
import { someBytes, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread, signedInUser } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';
import { readZip } from '../helpers/zip.js';

const ctx = await useTestContext({ workers: true, env: { INBOX_PUBLIC_URL: 'https://inbox.example.com' } });
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const connection = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };

/** A contact with a thread: a message carrying a file of `fileBytes`, and a private note. */
async function seedConversation(fileBytes: Buffer) {
  const thread = await seedThread(ctx.deps, connection);
  await db
    .insertInto('contact_handles')
    .values({
      workspace_id: ws,
      integration_key: 'whatsapp',
      external_id: `44${randomBytes(4).readUInt32BE()}`,
      contact_id: thread.contact_id,
    })
    .execute();
  const message = await seedMessage(ctx.deps, thread, `hello ${randomBytes(3).toString('hex')}`);
  const note = await seedMessage(ctx.deps, thread, 'a note for the team', { kind: 'note' });
  const fileId = await storeUpload(ctx.deps, ws, { bytes: fileBytes, contentType: 'image/png', filename: '../photo 1.png', kind: 'image' });
  await db.updateTable('attachments').set({ message_id: message.id }).where('id', '=', fileId).execute();
  return { thread, message, note, fileId };
}

async function exported(url: string) {
  const started = await ctx.app.inject({ method: 'POST', url, headers: tenant.headers });
  expect(started.statusCode, started.body).toBe(202);
  const { id } = started.json().data;
  const ready = await waitFor(async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: tenant.headers });
    return res.json().data.status !== 'pending' && res.json().data;
  }, 'the export');
  expect(ready).toMatchObject({ id, status: 'ready', url: `https://inbox.example.com/v1/exports/${id}/content`, error: null });
  const zip = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}/content`, headers: tenant.headers });
  expect(zip.statusCode).toBe(200);
  expect(zip.headers['content-type']).toBe('application/zip');
  expect(zip.headers['content-disposition']).toBe(`attachment; filename="export-${id}.zip"`);
  expect(zip.rawPayload.length).toBe(ready.size);
  return { id, files: readZip(zip.rawPayload) };
}

const json = (files: Map<string, Buffer>, name: string) => JSON.parse(files.get(name)!.toString('utf8'));

describe('exports', () => {
  it('a contact: its contact, its threads with messages and notes, and the files, in a zip', async () => {
    const bytes = someBytes(300_000);
    const mine = await seedConversation(bytes);
    const other = await seedConversation(someBytes(100));
    const { files } = await exported(`/v1/contacts/${mine.thread.contact_id}/export`);
    expect([...files.keys()].sort()).toEqual(
      ['contact.json', 'export.json', `files/${mine.fileId}-_photo 1.png`, `threads/${mine.thread.id}.json`].sort(),
    );
    expect(json(files, 'export.json')).toMatchObject({ kind: 'contact', workspaceId: ws, contactId: mine.thread.contact_id });
    expect(json(files, 'contact.json')).toMatchObject({ id: mine.thread.contact_id, handles: [{ integrationKey: 'whatsapp' }] });
    const thread = json(files, `threads/${mine.thread.id}.json`);
    expect(thread.thread).toMatchObject({ id: mine.thread.id, contactId: mine.thread.contact_id });
    expect(thread.messages.map((m: { id: number; private: boolean }) => [m.id, m.private])).toEqual([
      [mine.message.id, false],
      [mine.note.id, true],
    ]);
    expect(thread.messages[0].attachments).toMatchObject([{ id: mine.fileId, filename: '../photo 1.png' }]);
    expect(files.get(`files/${mine.fileId}-_photo 1.png`)).toEqual(bytes);
    expect([...files.keys()]).not.toContain(`threads/${other.thread.id}.json`);
    const audit = await db.selectFrom('audit_log').selectAll().where('action', '=', 'contact.exported').execute();
    expect(audit).toMatchObject([{ workspace_id: ws, target_type: 'contact', target_id: String(mine.thread.contact_id) }]);
  });

  it('the workspace: every live contact and every thread; an erased contact is not there', async () => {
    const a = await seedConversation(someBytes(200));
    const gone = await seedThread(ctx.deps, connection);
    await db.updateTable('contacts').set({ name: null, erased_at: new Date() }).where('id', '=', gone.contact_id).execute();
    const { files } = await exported('/v1/workspace/export');
    expect(json(files, 'export.json')).toMatchObject({ kind: 'workspace', workspaceId: ws, contactId: null });
    const contacts = json(files, 'contacts.json').map((c: { id: number }) => c.id);
    const live = await db
      .selectFrom('contacts')
      .select('id')
      .where('workspace_id', '=', ws)
      .where('erased_at', 'is', null)
      .orderBy('id')
      .execute();
    expect(contacts).toEqual(live.map((c) => c.id));
    expect(contacts).not.toContain(gone.contact_id);
    const threads = await db.selectFrom('threads').select('id').where('workspace_id', '=', ws).execute();
    for (const t of threads) expect(files.has(`threads/${t.id}.json`)).toBe(true);
    expect(files.has(`files/${a.fileId}-_photo 1.png`)).toBe(true);
  });

  it('an erasure withdraws the exports made before that may hold the person: the contact’s and the workspace’s', async () => {
    const person = await seedConversation(someBytes(100));
    const other = await seedConversation(someBytes(100));
    const own = await exported(`/v1/contacts/${person.thread.contact_id}/export`);
    const whole = await exported('/v1/workspace/export');
    const another = await exported(`/v1/contacts/${other.thread.contact_id}/export`);
    const keys = await db.selectFrom('exports').select(['id', 'storage_key']).execute();
    const keyOf = (id: string) => keys.find((k) => k.id === id)!.storage_key!;

    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${person.thread.contact_id}/erase`, headers: tenant.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    const show = async (id: string) =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: tenant.headers })).json().data;
    await waitFor(async () => (await show(own.id)).status === 'failed', 'the contact export withdrawn');
    for (const id of [own.id, whole.id]) {
      expect(await show(id)).toMatchObject({ status: 'failed', url: null, size: null, error: expect.stringContaining('erased') });
      const content = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}/content`, headers: tenant.headers });
      expect(content.statusCode).toBe(409);
      expect(await ctx.deps.storage.get(keyOf(id))).toBeUndefined();
    }
    // Another contact's export never held the person.
    expect(await show(another.id)).toMatchObject({ status: 'ready' });
    expect(await ctx.deps.storage.get(keyOf(another.id))).toBeDefined();
    // A workspace export asked for now is made as usual, without the person.
    const after = await exported('/v1/workspace/export');
    expect(json(after.files, 'contacts.json').map((c: { id: number }) => c.id)).not.toContain(person.thread.contact_id);
  });

  it('an export of a contact merged away is the kept contact’s: erasing that one withdraws it', async () => {
    const kept = await seedConversation(someBytes(100));
    const merged = await seedConversation(someBytes(100));
    const before = await exported(`/v1/contacts/${merged.thread.contact_id}/export`);
    const key = (await db.selectFrom('exports').select('storage_key').where('id', '=', before.id).executeTakeFirstOrThrow()).storage_key!;
    const merge = await ctx.app.inject({
      method: 'POST',
      url: `/v1/contacts/${kept.thread.contact_id}/merge`,
      headers: tenant.headers,
      payload: { contactId: merged.thread.contact_id },
    });
    expect(merge.statusCode, merge.body).toBe(200);

    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${kept.thread.contact_id}/erase`, headers: tenant.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    const show = async () =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/exports/${before.id}`, headers: tenant.headers })).json().data;
    await waitFor(async () => (await show()).status === 'failed', 'the merged contact’s export withdrawn');
    expect(await show()).toMatchObject({ status: 'failed', url: null, error: expect.stringContaining('erased') });
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${before.id}/content`, headers: tenant.headers });
    expect(content.statusCode).toBe(409);
    expect(await ctx.deps.storage.get(key)).toBeUndefined();
  });

  it('admins only, their own workspace only; a zip not written yet → 409; gone after 24 h with its bytes', async () => {
    const agent = await signedInUser(ctx.app, ctx.deps, ws, ['agent']);
    expect((await ctx.app.inject({ method: 'POST', url: '/v1/workspace/export', headers: agent.headers })).statusCode).toBe(403);
    const stranger = await makeTenant(ctx.deps);
    const { id } = await exported('/v1/workspace/export');
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: stranger.headers })).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/exports/not-a-uuid', headers: tenant.headers })).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'POST', url: '/v1/contacts/999999999/export', headers: tenant.headers })).statusCode).toBe(404);

    const pending = uuid7();
    await db
      .insertInto('exports')
      .values({ id: pending, workspace_id: ws, contact_id: null, expires_at: new Date(Date.now() + 3_600_000) })
      .execute();
    const early = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${pending}/content`, headers: tenant.headers });
    expect(early.statusCode).toBe(409);
    expect(early.json().error.code).toBe('export_not_ready');

    const row = await db.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(await ctx.deps.storage.get(row.storage_key!)).toBeDefined();
    await pruneExpiredExports(ctx.deps, new Date(Date.now() + 23 * 3_600_000));
    expect(await db.selectFrom('exports').select('id').where('id', '=', id).executeTakeFirst()).toBeDefined();
    await pruneExpiredExports(ctx.deps, new Date(Date.now() + 25 * 3_600_000));
    expect(await db.selectFrom('exports').select('id').where('id', '=', id).executeTakeFirst()).toBeUndefined();
    expect(await ctx.deps.storage.get(row.storage_key!)).toBeUndefined();
  });

  it('streams a workspace: its zip is never held whole in memory', async () => {
    // Live memory only: garbage from the bytes streamed through is collected before each sample.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const live = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const big = await makeTenant(ctx.deps);
    const thread = await seedThread(ctx.deps, { ...(await makeConnection(ctx.deps, big.workspace.id)), workspaceId: big.workspace.id });
    const message = await seedMessage(ctx.deps, thread, 'the files of a large workspace');
    // 96 MB of random bytes, which do not compress: the zip is as large as the files.
    const FILES = 6;
    const FILE_BYTES = 16 * CHUNK_BYTES;
    for (let f = 0; f < FILES; f++) {
      const key = `test/${uuid7()}`;
      const bytes = Readable.from(
        (function* () {
          for (let i = 0; i < FILE_BYTES / CHUNK_BYTES; i++) yield randomBytes(CHUNK_BYTES);
        })(),
      );
      const { size } = await ctx.deps.storage.put(key, bytes, { maxBytes: Number.MAX_SAFE_INTEGER });
      await db
        .insertInto('attachments')
        .values({
          workspace_id: big.workspace.id,
          message_id: message.id,
          kind: 'file',
          content_type: 'application/octet-stream',
          size,
          status: 'stored',
          storage_key: key,
        })
        .execute();
    }

    const baseline = live();
    let peak = baseline;
    // Each sample is a full collection (a tenth of a second or more): seldom, so the export runs.
    const sampler = setInterval(() => {
      peak = Math.max(peak, live());
    }, 1000);
    try {
      const started = await ctx.app.inject({ method: 'POST', url: '/v1/workspace/export', headers: big.headers });
      expect(started.statusCode, started.body).toBe(202);
      const { id } = started.json().data;
      const ready = await waitFor(
        async () => {
          const res = await ctx.app.inject({ method: 'GET', url: `/v1/exports/${id}`, headers: big.headers });
          expect(res.statusCode, res.body).toBe(200);
          return res.json().data.status !== 'pending' && res.json().data;
        },
        'the export',
        60_000,
      );
      expect(ready.status).toBe('ready');
      expect(ready.size).toBeGreaterThan(FILES * FILE_BYTES);
    } finally {
      clearInterval(sampler);
    }
    // Held whole, the zip would add its 96 MB (twice that while joined); streamed, what is in
    // flight is a few chunks each way and their hex text for the driver, whatever the files add
    // up to: 2–9 MB measured alone, up to 48 MB in the suite, where the worker process also
    // holds what earlier files left running.
    expect(peak - baseline).toBeLessThan(64 * 2 ** 20);
  }, 120_000);
});
