import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody, PNG_1X1 } from '../helpers/multipart.js';

const PUBLIC_URL = 'https://chat.example.test';
const ctx = await useTestContext({ env: { INBOX_PUBLIC_URL: PUBLIC_URL } });
const tenant = await makeTenant(ctx.deps);
const widget = await makeWidget(ctx.deps, tenant.workspace.id);

function upload(headers: Record<string, string>, bytes: Buffer | string = PNG_1X1, filename = 'photo.png', key = widget.key) {
  const body = multipartBody({ filename, bytes });
  return ctx.app.inject({
    method: 'POST',
    url: `/v1/livechat/${key}/attachments`,
    headers: { ...headers, ...body.headers },
    payload: body.payload,
  });
}

function send(headers: Record<string, string>, payload: Record<string, unknown>) {
  return ctx.app.inject({ method: 'POST', url: `/v1/livechat/${widget.key}/messages`, headers, payload });
}

const pathOf = (url: string) => url.slice(PUBLIC_URL.length);
const messageCount = async () => (await ctx.deps.db.selectFrom('messages').select('id').execute()).length;

describe('live chat attachments', () => {
  it('a visitor uploads a file and sends it; the visitor sees signed links, agents the plain content URL', async () => {
    const visitor = await startVisitor(ctx.app, widget.key);
    const up = await upload(visitor.headers);
    expect(up.statusCode, up.body).toBe(201);
    const file = up.json().data;
    expect(file).toMatchObject({ messageId: null, kind: 'image', contentType: 'image/png', status: 'stored', filename: 'photo.png' });
    expect(file.url).toMatch(new RegExp(`^${PUBLIC_URL}/v1/attachments/${file.id}/content\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    // The signed link is the visitor's credential for the bytes.
    const bytes = await ctx.app.inject({ method: 'GET', url: pathOf(file.url) });
    expect(bytes.statusCode).toBe(200);
    expect(bytes.rawPayload.equals(PNG_1X1)).toBe(true);

    const sent = await send(visitor.headers, { attachmentIds: [file.id] });
    expect(sent.statusCode, sent.body).toBe(201);
    const message = sent.json().data;
    expect(message.text).toBe('');
    expect(message.attachments).toEqual([expect.objectContaining({ id: file.id, messageId: message.id, status: 'stored' })]);
    expect(message.attachments[0].url).toMatch(/\?expires=\d+&signature=/);

    const own = await ctx.app.inject({ method: 'GET', url: `/v1/livechat/${widget.key}/messages`, headers: visitor.headers });
    expect(own.json().data[0].attachments[0].url).toMatch(/\?expires=\d+&signature=/);

    const agent = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${visitor.threadId}/messages`, headers: tenant.headers });
    expect(agent.json().data[0].attachments).toEqual([
      expect.objectContaining({ id: file.id, url: `${PUBLIC_URL}/v1/attachments/${file.id}/content` }),
    ]);
  });

  it("names a visitor's files sent without text in the thread's preview, stored and announced alike", async () => {
    const visitor = await startVisitor(ctx.app, widget.key);
    await send(visitor.headers, { text: 'Here is the receipt' });
    const ids = [(await upload(visitor.headers)).json().data.id, (await upload(visitor.headers)).json().data.id];
    const since = new Date();
    expect((await send(visitor.headers, { attachmentIds: ids })).statusCode).toBe(201);
    const thread = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${visitor.threadId}`, headers: tenant.headers })).json().data;
    expect(thread.lastMessagePreview).toBe('[image] [image]');
    // The event log holds what endpoints and sockets were told: the same Thread.
    const told = await ctx.deps.db
      .selectFrom('webhook_events')
      .select('body')
      .where('type', '=', 'thread.updated')
      .where('created_at', '>=', since)
      .execute();
    expect(told.map((r) => JSON.parse(r.body).data).filter((t: { id: number }) => t.id === visitor.threadId)).toEqual([thread]);
  });

  it("refuses another visitor's upload, a used one and an unknown id with 422, writing nothing", async () => {
    const ada = await startVisitor(ctx.app, widget.key);
    const bo = await startVisitor(ctx.app, widget.key);
    const adas = (await upload(ada.headers)).json().data;
    const before = await messageCount();
    const stolen = await send(bo.headers, { text: 'look', attachmentIds: [adas.id] });
    expect(stolen.statusCode).toBe(422);
    expect(stolen.json().error.message).toMatch(new RegExp(`${adas.id} is not an unused upload of this visitor`));
    expect((await send(bo.headers, { attachmentIds: [999_999_999] })).statusCode).toBe(422);
    expect(await messageCount()).toBe(before);

    expect((await send(ada.headers, { text: 'mine', attachmentIds: [adas.id] })).statusCode).toBe(201);
    const again = await send(ada.headers, { text: 'again', attachmentIds: [adas.id] });
    expect(again.statusCode).toBe(422);
    // A tenant's own upload is not a visitor's either.
    const body = multipartBody({ filename: 'a.png', bytes: PNG_1X1 });
    const tenants = await ctx.app.inject({
      method: 'POST',
      url: '/v1/attachments',
      headers: { ...tenant.headers, ...body.headers },
      payload: body.payload,
    });
    expect((await send(ada.headers, { attachmentIds: [tenants.json().data.id] })).statusCode).toBe(422);
  });

  it('needs text or an attachment, a visitor token, and a known widget', async () => {
    const visitor = await startVisitor(ctx.app, widget.key);
    const neither = await send(visitor.headers, {});
    expect(neither.statusCode).toBe(422);
    expect(neither.json().error.code).toBe('validation_failed');
    expect((await upload({})).statusCode).toBe(401);
    expect((await upload({ authorization: 'Bearer inbox_vt_wrong' })).statusCode).toBe(401);
    expect((await upload(visitor.headers, PNG_1X1, 'a.png', 'wk_unknown0000000000000000')).statusCode).toBe(404);
  });

  it('limits uploads per visitor like messages: the 21st in a minute gets 429', async () => {
    const visitor = await startVisitor(ctx.app, widget.key);
    for (let i = 0; i < 20; i++) expect((await upload(visitor.headers, `file ${i}`, `f${i}.txt`)).statusCode).toBe(201);
    const over = await upload(visitor.headers, 'one too many', 'f.txt');
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toMatch(/^\d+$/);
    // Another visitor is not held back.
    const other = await startVisitor(ctx.app, widget.key);
    expect((await upload(other.headers)).statusCode).toBe(201);
  });
});
