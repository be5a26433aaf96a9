import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { signedInUser } from '../helpers/threads.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

// CSAT (docs/reports.md, "CSAT"): the survey after a user's resolution, through the real send
// path to a provider on loopback; the rating page and its answer; the event to an endpoint; the
// list. The service's clock is injected: closing a survey moves it, nothing sleeps.
const SECRET = 'csat-webhook-secret';
const PHONE_ID = '106540352242922';
const fake = await startFakeProviders();
const receiver = await startReceiver();
afterAll(() => Promise.all([fake.close(), receiver.close()]));
let offset = 0;
const ctx = await useTestContext({
  workers: true,
  now: () => new Date(Date.now() + offset),
  env: {
    INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET, apiBaseUrl: fake.baseUrls.whatsapp } }),
  },
});
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: PHONE_ID,
  credentials: { accessToken: 'EAAG-csat-token' },
});
const admin = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['admin']);
const agent = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['agent']);
const endpoint = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: tenant.headers,
  payload: { url: `${receiver.url}/csat`, events: ['csat.received'] },
});
expect(endpoint.statusCode, endpoint.body).toBe(201);

type Method = 'GET' | 'POST' | 'PATCH';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object | string) =>
  ctx.app.inject({ method, url, headers, ...(payload !== undefined ? { payload } : {}) });
const rate = (token: string, payload: object) => call('POST', `/csat/${token}`, { 'content-type': 'application/json' }, payload);

let seq = 0;
/** A contact writes in on WhatsApp (just now: the reply window is open); answers the thread. */
async function inboundThread() {
  const from = `1650555${String(++seq).padStart(4, '0')}`;
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = PHONE_ID;
  value.contacts[0].wa_id = from;
  value.messages[0].from = from;
  value.messages[0].id = `wamid.csat-${from}`;
  value.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
  expect((await deliverSigned(ctx, 'whatsapp', payload)).statusCode).toBe(200);
  const m = await waitFor(
    () => db.selectFrom('messages').select('thread_id').where('external_id', '=', `wamid.csat-${from}`).executeTakeFirst(),
    'the inbound message',
  );
  return { threadId: m.thread_id, from };
}

const outbound = (threadId: number) =>
  db
    .selectFrom('messages')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('direction', '=', 'outbound')
    .where('kind', '=', 'message')
    .orderBy('id')
    .execute();
const resolve = (threadId: number, headers: Record<string, string> = admin.headers) =>
  call('PATCH', `/v1/threads/${threadId}`, headers, { status: 'resolved' });
const reply = (threadId: number) => call('POST', `/v1/threads/${threadId}/messages`, admin.headers, { text: 'Here you go.' });
const tokenOf = (text: string) => /\/csat\/([A-Za-z0-9_-]+)$/.exec(text)?.[1];

/** A thread answered by a user and resolved by them: the survey's token. */
async function surveyed() {
  const { threadId, from } = await inboundThread();
  expect((await reply(threadId)).statusCode).toBe(202);
  expect((await resolve(threadId)).statusCode).toBe(200);
  const sent = await outbound(threadId);
  const token = tokenOf(sent.at(-1)!.text);
  expect(token).toBeDefined();
  return { threadId, from, token: token! };
}

describe('the connection setting', () => {
  it('is off by default, set and changed by PATCH, and checked', async () => {
    const before = await call('GET', '/v1/connections', tenant.headers);
    expect(before.json().data.find((c: { id: number }) => c.id === connection.id).csat).toEqual({ enabled: false, question: null });
    let res = await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, {
      csat: { enabled: true, question: '  How did we do?  ' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.csat).toEqual({ enabled: true, question: 'How did we do?' });
    // Leaving the question out keeps it.
    res = await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { csat: { enabled: true } });
    expect(res.json().data.csat).toEqual({ enabled: true, question: 'How did we do?' });
    for (const csat of [{ enabled: 'yes' }, { question: 'q' }, { enabled: true, question: '' }, { enabled: true, colour: 'red' }]) {
      res = await call('PATCH', `/v1/connections/${connection.id}`, tenant.headers, { csat });
      expect(res.statusCode, JSON.stringify(csat)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
  });
});

describe('the survey', () => {
  it('is not sent without a reply, after a key resolves, after the reply window, nor twice', async () => {
    const quiet = await inboundThread();
    expect((await resolve(quiet.threadId)).statusCode).toBe(200);
    expect(await outbound(quiet.threadId)).toEqual([]);

    const byKey = await inboundThread();
    await reply(byKey.threadId);
    expect((await resolve(byKey.threadId, tenant.headers)).statusCode).toBe(200);
    expect((await outbound(byKey.threadId)).length).toBe(1);

    // The contact last wrote 25 hours ago: WhatsApp's window closed, a free-form message would be refused.
    const late = await inboundThread();
    await reply(late.threadId);
    const dayAgo = new Date(Date.now() - 25 * 3_600_000);
    await db.updateTable('threads').set({ last_inbound_at: dayAgo }).where('id', '=', late.threadId).execute();
    expect((await resolve(late.threadId)).statusCode).toBe(200);
    expect((await outbound(late.threadId)).length).toBe(1);

    // The contact was erased after the reply: nobody is left to ask.
    const erased = await inboundThread();
    await reply(erased.threadId);
    const { contact_id } = await db.selectFrom('threads').select('contact_id').where('id', '=', erased.threadId).executeTakeFirstOrThrow();
    expect((await call('POST', `/v1/contacts/${contact_id}/erase`, admin.headers)).statusCode).toBe(202);
    expect((await resolve(erased.threadId)).statusCode).toBe(200);
    expect((await outbound(erased.threadId)).length).toBe(1);

    // Reopened and resolved again without a new reply: the new conversation had none.
    const { threadId } = await surveyed();
    expect((await call('PATCH', `/v1/threads/${threadId}`, admin.headers, { status: 'open' })).statusCode).toBe(200);
    expect((await resolve(threadId)).statusCode).toBe(200);
    expect((await outbound(threadId)).length).toBe(2);
  });

  it('goes out on the contact’s channel with the question and the link, once', async () => {
    const { threadId, from, token } = await surveyed();
    const [, survey] = await outbound(threadId);
    expect(survey!.text).toBe(`How did we do?\n${ctx.deps.config.publicUrl}/csat/${token}`);
    expect(survey!.author_id).toBeNull();
    expect(survey!.automation).toBe(true);
    // The worker sends it to the provider like any reply.
    const sent = await waitFor(
      async () => fake.requests.find((r) => r.provider === 'whatsapp' && r.body.includes(`/csat/${token}`)),
      'the survey at the provider',
    );
    expect(sent.parsed).toMatchObject({ to: from, type: 'text' });
    const conversation = await db.selectFrom('conversations').selectAll().where('thread_id', '=', threadId).executeTakeFirstOrThrow();
    expect(conversation.csat_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(conversation.csat_token_hash).not.toContain(token);
    expect(conversation.messages_out).toBe(2);
  });
});

describe('the rating page and its answer', () => {
  it('serves a page with five choices and no script under a strict CSP; answers JSON and form posts', async () => {
    const { threadId, token } = await surveyed();
    const page = await call('GET', `/csat/${token}`, {});
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).not.toMatch(/<script/i);
    expect(page.body).toContain('<legend>How did we do?</legend>');
    expect(page.body.match(/type="radio" name="rating"/g)).toHaveLength(5);
    expect(page.body).toMatch(/<label class="comment" for="comment">/);

    for (const rating of [0, 6, '4', 4.5, null]) {
      const res = await rate(token, { rating });
      expect(res.statusCode, String(rating)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await call('POST', `/csat/${token}`, form, 'rating=abc')).statusCode).toBe(422);
    expect((await rate(token, { rating: 3, comment: 'x'.repeat(2001) })).statusCode).toBe(422);

    let res = await rate(token, { rating: 2, comment: ' slow ' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ rating: 2, comment: 'slow' });
    // The page's own form post: the page again, saying so; the rating replaced.
    res = await call('POST', `/csat/${token}`, form, 'rating=5&comment=Quick+and+kind');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Your rating of 5 of 5 is saved');
    expect(res.body).toMatch(/value="5" required checked/);
    const stored = () => db.selectFrom('conversations').selectAll().where('thread_id', '=', threadId).executeTakeFirstOrThrow();
    expect(await stored()).toMatchObject({ csat_rating: 5, csat_comment: 'Quick and kind' });
    // A rating alone keeps the comment; a blank comment clears it.
    expect((await rate(token, { rating: 4 })).json().data.comment).toBe('Quick and kind');
    expect(await stored()).toMatchObject({ csat_rating: 4, csat_comment: 'Quick and kind' });
    expect((await rate(token, { rating: 5, comment: ' ' })).json().data.comment).toBeNull();
    expect((await call('POST', `/csat/${token}`, form, 'rating=5&comment=Quick+and+kind')).statusCode).toBe(200);

    // Every answer reached the endpoint, as the contact gave it.
    const events = await waitFor(async () => {
      const got = receiver.received.filter((r) => r.json.type === 'csat.received' && r.json.data.threadId === threadId);
      return got.length === 5 ? got : undefined;
    }, 'five csat.received deliveries');
    const thread = await db.selectFrom('threads').select('contact_id').where('id', '=', threadId).executeTakeFirstOrThrow();
    expect(events.map((e) => e.json.data)).toEqual(
      expect.arrayContaining([{ threadId, rating: 5, comment: 'Quick and kind', contactId: thread.contact_id, assigneeId: admin.user.id }]),
    );
    expect(events.map((e) => e.json.data.rating).sort()).toEqual([2, 4, 5, 5, 5]);
  });

  it('answers 404 for a token that names no survey, and 410 once seven days have passed', async () => {
    expect((await rate('A'.repeat(32), { rating: 4 })).statusCode).toBe(404);
    expect((await rate('A'.repeat(32), { rating: 4 })).json().error.code).toBe('not_found');
    expect((await call('GET', '/csat/nope', {})).statusCode).toBe(404);

    const { token } = await surveyed();
    offset += 7 * 86_400_000 - 60_000;
    expect((await rate(token, { rating: 4 })).statusCode).toBe(200);
    offset += 60_000;
    const res = await rate(token, { rating: 5 });
    expect(res.statusCode).toBe(410);
    expect(res.json().error.code).toBe('gone');
    const page = await call('GET', `/csat/${token}`, {});
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This survey has closed');
    expect(page.body).toContain('Your rating was 4 of 5');
    offset = 0;
  });
});

describe('GET /v1/csat-responses and the reports', () => {
  it('lists the ratings newest first, filtered by rating and time, for admins; the reports count them', async () => {
    const other = await makeTenant(ctx.deps);
    const before = new Date(Date.now() + offset).toISOString();
    const rated: { threadId: number; rating: number }[] = [];
    for (const rating of [1, 4, 5]) {
      const { threadId, token } = await surveyed();
      expect((await rate(token, { rating, comment: `r${rating}` })).statusCode).toBe(200);
      rated.push({ threadId, rating });
    }
    const after = new Date(Date.now() + offset + 1000).toISOString();
    const list = (query: string, headers: Record<string, string> = tenant.headers) => call('GET', `/v1/csat-responses?${query}`, headers);

    let res = await list(`from=${before}&to=${after}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((r: { threadId: number }) => r.threadId)).toEqual(rated.map((r) => r.threadId).reverse());
    expect(res.json().data[0]).toMatchObject({ rating: 5, comment: 'r5', assigneeId: admin.user.id, connectionId: connection.id });

    res = await list(`from=${before}&to=${after}&rating=4,5`);
    expect(res.json().data.map((r: { rating: number }) => r.rating)).toEqual([5, 4]);
    res = await list(`from=${before}&to=${after}&limit=2`);
    expect(res.json().data).toHaveLength(2);
    res = await list(`from=${before}&to=${after}&limit=2&cursor=${res.json().meta.nextCursor}`);
    expect(res.json().data.map((r: { rating: number }) => r.rating)).toEqual([1]);
    expect(res.json().meta.nextCursor).toBeUndefined();
    expect((await list(`to=${before}`)).json().data.every((r: { ratedAt: string }) => r.ratedAt < before)).toBe(true);

    expect((await list('rating=6')).statusCode).toBe(422);
    expect((await list('from=yesterday')).statusCode).toBe(422);
    // A range that ends before it starts, or a zone that is none, is refused as by the reports.
    for (const [query, field] of [
      ['from=2026-03-05&to=2026-03-04', 'to'],
      [`from=${after}&to=${before}`, 'to'],
      ['timezone=Mars/Olympus', 'timezone'],
    ] as const) {
      const refused = await list(query);
      expect(refused.statusCode, query).toBe(422);
      expect(refused.json().error.message, query).toMatch(new RegExp(`^${field}:`));
    }
    expect((await list('', agent.headers)).statusCode).toBe(403);
    expect((await list('', other.headers)).json().data).toEqual([]);

    const summary = await call('GET', `/v1/reports/summary?from=${before}&to=${after}`, tenant.headers);
    expect(summary.json().data.groups[0].csat).toEqual({ responses: 3, average: 10 / 3, satisfiedShare: 2 / 3 });
    const series = await call('GET', `/v1/reports/timeseries?metric=csatAverage&interval=day&from=${before}&to=${after}`, tenant.headers);
    const values = series
      .json()
      .data.map((b: { value: number | null }) => b.value)
      .filter((v: number | null) => v !== null);
    expect(values).toEqual([10 / 3]);
  });
});

describe('merging the contact', () => {
  it('keeps the survey answerable on the thread it was folded into, naming the surviving contact', async () => {
    const { threadId, token } = await surveyed();
    const { threadId: keptId } = await inboundThread();
    const contactOf = async (id: number) =>
      (await db.selectFrom('threads').select('contact_id').where('id', '=', id).executeTakeFirstOrThrow()).contact_id;
    const [merged, keeper] = [await contactOf(threadId), await contactOf(keptId)];
    const res = await call('POST', `/v1/contacts/${keeper}/merge`, tenant.headers, { contactId: merged });
    expect(res.statusCode, res.body).toBe(200);
    // Both wrote on the same number: the surveyed thread was folded into the keeper's.
    expect((await call('GET', `/v1/threads/${threadId}`, tenant.headers)).statusCode).toBe(404);
    expect((await rate(token, { rating: 4, comment: 'merged' })).statusCode).toBe(200);
    const event = await waitFor(
      async () => receiver.received.find((r) => r.json.type === 'csat.received' && r.json.data.comment === 'merged'),
      'csat.received after the merge',
    );
    expect(event.json.data).toEqual({ threadId: keptId, rating: 4, comment: 'merged', contactId: keeper, assigneeId: admin.user.id });
    const listed: { threadId: number }[] = (await call('GET', '/v1/csat-responses?limit=100', tenant.headers)).json().data;
    expect(listed.filter((r) => r.threadId === keptId)).toMatchObject([{ rating: 4, comment: 'merged' }]);
  });
});

describe('erasing the contact', () => {
  it('removes the comment and the csat.received events, keeps the rating and ends the link', async () => {
    const { threadId, token } = await surveyed();
    expect((await rate(token, { rating: 3, comment: 'my words' })).statusCode).toBe(200);
    const { contact_id: contactId } = await db
      .selectFrom('threads')
      .select('contact_id')
      .where('id', '=', threadId)
      .executeTakeFirstOrThrow();
    const events = () =>
      db
        .selectFrom('webhook_events')
        .select('id')
        .where('type', '=', 'csat.received')
        .where('body', 'like', `%"threadId":${threadId},%`)
        .execute();
    expect(await events()).toHaveLength(1);
    expect((await call('POST', `/v1/contacts/${contactId}/erase`, tenant.headers)).statusCode).toBe(202);
    const c = await waitFor(async () => {
      const row = await db.selectFrom('conversations').selectAll().where('thread_id', '=', threadId).executeTakeFirstOrThrow();
      return row.csat_comment === null ? row : undefined;
    }, 'the comment to be erased');
    expect(c.csat_rating).toBe(3);
    expect(await events()).toEqual([]);
    // The link was the person's, like a visitor token: it names no survey any more, so nothing
    // of theirs is shown or taken again.
    expect((await call('GET', `/csat/${token}`, {})).statusCode).toBe(404);
    expect((await rate(token, { rating: 5, comment: 'back again' })).statusCode).toBe(404);
    expect(await db.selectFrom('conversations').select('csat_comment').where('thread_id', '=', threadId).executeTakeFirstOrThrow()).toEqual(
      {
        csat_comment: null,
      },
    );
  });
});
