import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import type { Deps } from '../../src/deps.js';
import { useTestContext } from '../helpers/app.js';
import { seedReplyThread, someBytes, startLinkServer, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

// Rules of `attachmentIds` on replies (docs/attachments.md, "Outbound"): what is refused
// before anything is written, what a note does with a file, and an Idempotency-Key replay.
let deps: Deps | undefined;
const links = await startLinkServer(() => deps!);
const fake = await startFakeProviders();
afterAll(() => Promise.all([fake.close(), links.close()]));
const TOKEN = 'EAAG-reply-attachments-token-0123456789';
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: links.url,
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { apiBaseUrl: fake.baseUrls.whatsapp },
      aggregator: { apiBaseUrl: fake.baseUrls.aggregator },
    }),
  },
});
deps = ctx.deps;
const tenant = await makeTenant(ctx.deps);
const other = await makeTenant(ctx.deps);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352242933',
  credentials: { accessToken: TOKEN },
});
const aggregator = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'aggregator',
  externalAccountId: 'agg-acct-1',
  credentials: { accessToken: TOKEN },
});
const onWhatsapp = { id: whatsapp.id, workspaceId: tenant.workspace.id, integrationKey: 'whatsapp' };

beforeEach(() => fake.reset());

const upload = (workspaceId = tenant.workspace.id, bytes = someBytes()) =>
  storeUpload(ctx.deps, workspaceId, { bytes, contentType: 'image/png', filename: 'photo.png', kind: 'image' });

const reply = (threadId: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers: { ...tenant.headers, 'content-type': 'application/json', ...headers },
    payload: body,
  });

const attachmentRow = (id: number) => ctx.deps.db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const outboundCount = async (threadId: number) =>
  (await ctx.deps.db.selectFrom('messages').select('id').where('thread_id', '=', threadId).where('direction', '=', 'outbound').execute())
    .length;
const settled = (id: number) =>
  waitFor(async () => {
    const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);

describe('POST /v1/threads/:id/messages with attachmentIds', () => {
  it('links the upload to the reply in its transaction, and a file alone is a reply (its preview names the kind)', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000001');
    const id = await upload();
    const res = await reply(thread.id, { attachmentIds: [id] });
    expect(res.statusCode, res.body).toBe(202);
    const message = res.json().data;
    expect(message).toMatchObject({ text: '', status: 'queued' });
    expect((await attachmentRow(id)).message_id).toBe(message.id);
    const row = await ctx.deps.db
      .selectFrom('threads')
      .select('last_message_preview')
      .where('id', '=', thread.id)
      .executeTakeFirstOrThrow();
    expect(row.last_message_preview).toBe('[image]');
    expect((await settled(message.id)).status).toBe('sent');
  });

  const refusals: [string, () => Promise<Record<string, unknown>>, string][] = [
    ['neither text nor attachments', async () => ({}), 'a message is text or at least one attachment'],
    ['an unknown id', async () => ({ text: 'hi', attachmentIds: [9_007_199_254_740_000] }), 'names no attachment of this workspace'],
    [
      "another workspace's upload",
      async () => ({ attachmentIds: [await upload(other.workspace.id)] }),
      'names no attachment of this workspace',
    ],
    ['an id named twice', async () => upload().then((id) => ({ attachmentIds: [id, id] })), 'named twice'],
    [
      'two files on WhatsApp',
      async () => ({ attachmentIds: [await upload(), await upload()] }),
      'whatsapp carries one attachment per message; 2 given',
    ],
    [
      'a template with a file',
      async () => ({ template: { name: 'welcome', language: 'en_US', parameters: { body: [] } }, attachmentIds: [await upload()] }),
      'a template is sent alone',
    ],
    [
      'an attachment still pending',
      async () => {
        const id = await upload();
        await ctx.deps.db.updateTable('attachments').set({ status: 'pending' }).where('id', '=', id).execute();
        return { attachmentIds: [id] };
      },
      'is pending, not stored',
    ],
    ['eleven ids', async () => ({ attachmentIds: Array.from({ length: 11 }, (_, i) => 9_007_199_254_740_000 + i) }), 'attachmentIds'],
  ];
  it.each(refusals)('refuses %s with a 422 that names the rule, writing nothing', async (_what, body, message) => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, `49151${Math.floor(Math.random() * 1e7)}`);
    const payload = await body();
    const res = await reply(thread.id, payload);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error.code).toBe('validation_failed');
    expect(res.json().error.message).toContain(message);
    expect(await outboundCount(thread.id)).toBe(0);
    for (const id of (payload.attachmentIds as number[] | undefined) ?? []) {
      const row = await ctx.deps.db.selectFrom('attachments').select('message_id').where('id', '=', id).executeTakeFirst();
      if (row) expect(row.message_id).toBeNull();
    }
  });

  it('refuses an upload already on a message', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000002');
    const id = await upload();
    const first = await reply(thread.id, { attachmentIds: [id] });
    expect(first.statusCode).toBe(202);
    // Sent before the next test looks at what the fake provider received.
    await settled(first.json().data.id);
    const again = await reply(thread.id, { text: 'once more', attachmentIds: [id] });
    expect(again.statusCode).toBe(422);
    expect(again.json().error.message).toContain(`attachment ${id} is already on a message`);
    expect(await outboundCount(thread.id)).toBe(1);
  });

  it('gives one upload to one of two replies that name it at once', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000003');
    const id = await upload();
    const answers = await Promise.all([
      reply(thread.id, { text: 'a', attachmentIds: [id] }),
      reply(thread.id, { text: 'b', attachmentIds: [id] }),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([202, 422]);
    const taken = answers.find((a) => a.statusCode === 202)!.json().data.id;
    expect((await attachmentRow(id)).message_id).toBe(taken);
    expect(await outboundCount(thread.id)).toBe(1);
    await settled(taken);
  });

  it('refuses files on a channel that cannot send them', async () => {
    const thread = await seedReplyThread(
      ctx.deps,
      { id: aggregator.id, workspaceId: tenant.workspace.id, integrationKey: 'aggregator' },
      '+4915100000004',
    );
    const res = await reply(thread.id, { text: 'see attached', attachmentIds: [await upload()] });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toContain('aggregator cannot send files');
    expect(await outboundCount(thread.id)).toBe(0);
  });

  it('a note may carry files and sends nothing', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000005');
    // Two files: the channel's one-file rule is about what is sent, and a note sends nothing.
    const ids = [await upload(), await upload()];
    const res = await reply(thread.id, { private: true, text: 'the customer photo, for the record', attachmentIds: ids });
    expect(res.statusCode, res.body).toBe(201);
    const note = res.json().data;
    expect(note).toMatchObject({ private: true, kind: 'note', status: 'sent' });
    for (const id of ids) expect((await attachmentRow(id)).message_id).toBe(note.id);
    // A reply queued after it is sent; the note never was (the one request is the reply's).
    const after = (await reply(thread.id, { text: 'thanks' })).json().data;
    await settled(after.id);
    expect(fake.requests.filter((r) => r.path.endsWith('/media'))).toHaveLength(0);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.parsed).toMatchObject({ type: 'text', text: { body: 'thanks' } });
  });

  it('an Idempotency-Key replay answers the first answer, with the file on the same message, and sends once', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000006');
    const id = await upload();
    const body = { text: 'your invoice', attachmentIds: [id] };
    const first = await reply(thread.id, body, { 'idempotency-key': 'invoice-1' });
    expect(first.statusCode).toBe(202);
    const second = await reply(thread.id, body, { 'idempotency-key': 'invoice-1' });
    expect(second.statusCode).toBe(202);
    expect(second.json().data).toEqual(first.json().data);
    expect((await attachmentRow(id)).message_id).toBe(first.json().data.id);
    await settled(first.json().data.id);
    expect(await outboundCount(thread.id)).toBe(1);
    expect(fake.requests.filter((r) => r.path.endsWith('/media'))).toHaveLength(1);
    expect(fake.requests.filter((r) => r.path.endsWith('/messages'))).toHaveLength(1);
    // The same key with other files is another request: refused, nothing written.
    const other = await reply(thread.id, { text: 'your invoice', attachmentIds: [await upload()] }, { 'idempotency-key': 'invoice-1' });
    expect(other.statusCode).toBe(409);
    expect(await outboundCount(thread.id)).toBe(1);
  });

  it('a reply whose bytes are gone from the storage fails with a reason, not a retry', async () => {
    const thread = await seedReplyThread(ctx.deps, onWhatsapp, '4915100000007');
    const id = await upload();
    const { storage_key } = await attachmentRow(id);
    await ctx.deps.storage.delete(storage_key!);
    const message = (await reply(thread.id, { text: 'lost', attachmentIds: [id] })).json().data;
    const done = await settled(message.id);
    expect(done.status).toBe('failed');
    expect(done.error).toContain(`attachment ${id}: its bytes are not in the storage`);
    expect(fake.requests).toHaveLength(0);
  });

  it('the OpenAPI document describes attachmentIds on the reply body', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const body = doc.paths['/v1/threads/{id}/messages'].post.requestBody.content['application/json'].schema;
    expect(body.properties.attachmentIds).toMatchObject({ type: 'array', minItems: 1, maxItems: 10, items: { type: 'integer' } });
    expect(body.properties.attachmentIds.description).toContain('docs/attachments.md');
  });
});
