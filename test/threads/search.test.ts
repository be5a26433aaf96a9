import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { MALFORMED_CURSOR_MESSAGE } from '../../src/http/errors.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread, signedInUser } from '../helpers/threads.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps); // an admin key
const ws = tenant.workspace.id;
const reader = { 'x-api-key': (await issueApiKey(ctx.deps.db, ws, 'reader', ['read'])).key };
const writer = { 'x-api-key': (await issueApiKey(ctx.deps.db, ws, 'writer', ['write'])).key };
const agent = await signedInUser(ctx.app, ctx.deps, ws);
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const other = await makeTenant(ctx.deps);
const otherLine = { ...(await makeConnection(ctx.deps, other.workspace.id)), workspaceId: other.workspace.id };

let clock = Date.UTC(2026, 0, 1);
const at = () => {
  clock += 1000;
  return new Date(clock);
};
const a = await seedThread(ctx.deps, line);
const b = await seedThread(ctx.deps, line);
const m = {
  order: await seedMessage(ctx.deps, a, 'Where is my order? It has not arrived', { createdAt: at() }),
  refund: await seedMessage(ctx.deps, a, 'I would like a refund for the order please', { createdAt: at() }),
  late: await seedMessage(ctx.deps, b, 'The parcel arrived late and damaged', { createdAt: at() }),
  french: await seedMessage(ctx.deps, b, 'Ma commande est arrivée en retard', { createdAt: at() }),
  cyrillic: await seedMessage(ctx.deps, b, 'Где мой заказ', { createdAt: at() }),
  note: await seedMessage(ctx.deps, b, 'Customer is angry about the refund, escalate', { kind: 'note', createdAt: at() }),
  activity: await seedMessage(ctx.deps, b, 'Ada assigned the conversation to Bo about the refund', { kind: 'activity', createdAt: at() }),
};
const foreignThread = await seedThread(ctx.deps, otherLine);
const foreign = await seedMessage(ctx.deps, foreignThread, 'refund for my order in another workspace', { createdAt: at() });

async function search(q: string, headers: Record<string, string> = agent.headers, extra = '') {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/messages/search?q=${encodeURIComponent(q)}${extra}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: { id: number; threadId: number; text: string }[]; meta: { nextCursor?: string } };
}
const ids = async (q: string, headers?: Record<string, string>) => (await search(q, headers)).data.map((x) => x.id);

describe('GET /v1/messages/search', () => {
  it('finds messages by a word, newest first, each hit the Message with its threadId', async () => {
    const found = await search('order');
    expect(found.data.map((x) => x.id)).toEqual([m.refund.id, m.order.id]);
    expect(found.data[0]).toMatchObject({ id: m.refund.id, threadId: a.id, text: m.refund.text, direction: 'inbound', status: 'received' });
    expect(await ids('ORDER')).toEqual([m.refund.id, m.order.id]);
  });

  it('matches any language’s words as written (no stemming, no stop words)', async () => {
    expect(await ids('arrivée')).toEqual([m.french.id]);
    expect(await ids('заказ')).toEqual([m.cyrillic.id]);
    expect(await ids('the')).toEqual([m.note.id, m.late.id, m.refund.id]);
    expect(await ids('orders')).toEqual([]);
  });

  it('understands quotes, or and -word', async () => {
    expect(await ids('"arrived late"')).toEqual([m.late.id]);
    expect(await ids('"late arrived"')).toEqual([]);
    expect(await ids('arrived late')).toEqual([m.late.id]);
    expect(await ids('parcel or commande')).toEqual([m.french.id, m.late.id]);
    expect(await ids('order -refund')).toEqual([m.order.id]);
    expect(await ids('"has not arrived" or damaged')).toEqual([m.late.id, m.order.id]);
    // 'simple' keeps every word, so a lone `or` is the word "or", not an operator.
    await seedMessage(ctx.deps, b, 'now or never', { createdAt: new Date(Date.UTC(2025, 0, 1)) }).then(async (x) => {
      expect(await ids('"" or')).toEqual([x.id]);
      await ctx.deps.db.deleteFrom('messages').where('id', '=', x.id).execute();
    });
  });

  it('finds private notes for a user only, never for an API key; activity lines never', async () => {
    expect(await ids('refund')).toEqual([m.note.id, m.refund.id]);
    expect(await ids('escalate')).toEqual([m.note.id]);
    expect(await ids('refund', reader)).toEqual([m.refund.id]);
    expect(await ids('escalate', reader)).toEqual([]);
    expect(await ids('escalate', writer)).toEqual([]);
    expect(await ids('escalate', tenant.headers)).toEqual([]);
    expect(await ids('assigned')).toEqual([]);
  });

  it('never returns another workspace’s messages', async () => {
    expect(await ids('workspace')).toEqual([]);
    expect(await ids('refund', other.headers)).toEqual([foreign.id]);
    expect(await ids('parcel', other.headers)).toEqual([]);
  });

  it('pages with the cursor, every hit once', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await search('the or order or ma or где', agent.headers, `&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((x) => x.id));
      cursor = page.meta.nextCursor;
    } while (cursor);
    expect(seen).toEqual([m.note.id, m.cyrillic.id, m.french.id, m.late.id, m.refund.id, m.order.id]);
  });

  it('refuses a search with no word to find, or only excluded words (422)', async () => {
    for (const q of ['-', '""', '"" -', '&|!', ':*', '-refund', '-refund -order']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/messages/search?q=${encodeURIComponent(q)}`, headers: agent.headers });
      expect(res.statusCode, q).toBe(422);
      expect(res.json().error).toEqual({ code: 'validation_failed', message: expect.stringMatching(/^q: /) });
    }
    for (const url of ['/v1/messages/search', '/v1/messages/search?q=', `/v1/messages/search?q=${'a'.repeat(257)}`]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: agent.headers });
      expect(res.statusCode, url).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const bad = await ctx.app.inject({ method: 'GET', url: '/v1/messages/search?q=order&cursor=bm9wZQ', headers: agent.headers });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.message).toBe(MALFORMED_CURSOR_MESSAGE);
  });

  it('needs a credential', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/messages/search?q=order' })).statusCode).toBe(401);
  });
});
