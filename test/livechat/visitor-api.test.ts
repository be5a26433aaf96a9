import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { pruneExpired } from '../../src/maintenance/maintenance.queries.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { makeWidget, openSocket, startVisitor, visitorSays } from '../helpers/livechat.js';

const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ logLines });
const tenant = await makeTenant(ctx.deps);
const widget = await makeWidget(ctx.deps, tenant.workspace.id);
const url = (path: string, key = widget.key) => `/v1/livechat/${key}${path}`;
const agentGet = (path: string) => ctx.app.inject({ method: 'GET', url: path, headers: tenant.headers });

describe('livechat connections', () => {
  it('get a random wk_ widget key when none is given, and keep allowedOrigins normalised', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
      headers: adminHeaders(),
      payload: {
        integrationKey: 'livechat',
        name: 'Shop chat',
        allowedOrigins: ['https://Shop.Example:443', 'http://localhost:8080/', 'https://shop.example'],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data.externalAccountId).toMatch(/^wk_[A-Za-z0-9_-]{20,}$/);
    expect(data.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:8080']);
    const second = await makeWidget(ctx.deps, tenant.workspace.id);
    expect(second.key).not.toBe(data.externalAccountId);
    // The list shows them; other channels carry no allowedOrigins.
    const list = (await agentGet('/v1/connections')).json().data as { id: number; allowedOrigins?: string[] }[];
    expect(list.find((c) => c.id === data.id)!.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:8080']);
  });

  it('refuse what is not an origin, origins on other channels, and other channels without an account id (422)', async () => {
    const create = (payload: Record<string, unknown>) =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
        headers: adminHeaders(),
        payload: { name: 'x', ...payload },
      });
    for (const bad of [
      'https://shop.example/path',
      'shop.example',
      'ftp://shop.example',
      'https://user:pw@shop.example',
      'https://shop.example?x=1',
    ]) {
      const res = await create({ integrationKey: 'livechat', allowedOrigins: [bad] });
      expect(res.statusCode, bad).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await create({ integrationKey: 'livechat', externalAccountId: 'has space' })).statusCode).toBe(422);
    expect((await create({ integrationKey: 'whatsapp', externalAccountId: '1', allowedOrigins: [] })).statusCode).toBe(422);
    expect((await create({ integrationKey: 'whatsapp' })).statusCode).toBe(422);
    expect((await create({ integrationKey: 'livechat', externalAccountId: 'wk_my-own-key' })).json().data.externalAccountId).toBe(
      'wk_my-own-key',
    );
  });

  it('change allowedOrigins with PATCH /v1/connections/:id (livechat only)', async () => {
    const w = await makeWidget(ctx.deps, tenant.workspace.id);
    const patch = (id: number, payload: Record<string, unknown>) =>
      ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers: tenant.headers, payload });
    const res = await patch(w.connection.id, { allowedOrigins: ['https://a.example'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.allowedOrigins).toEqual(['https://a.example']);
    const refused = await ctx.app.inject({
      method: 'POST',
      url: url('/conversations', w.key),
      headers: { origin: 'https://b.example' },
      payload: {},
    });
    expect(refused.statusCode).toBe(403);
    const other = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
      headers: adminHeaders(),
      payload: { integrationKey: 'sms', externalAccountId: '+15550001', name: 'sms' },
    });
    expect((await patch(other.json().data.id, { allowedOrigins: [] })).statusCode).toBe(422);
  });
});

describe('POST /v1/livechat/:widgetKey/conversations', () => {
  it('answers 201 { data: { visitorToken, threadId }, meta }, opens a livechat thread the agent sees, and stores the token hashed', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: url('/conversations'),
      payload: { name: 'Ada Visitor', email: 'ada@visitor.test' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
    expect(body.meta.requestId).toBe(res.headers['x-request-id']);
    expect(body.data).toEqual({ visitorToken: expect.any(String), threadId: expect.any(Number) });
    const { visitorToken, threadId } = body.data;
    expect(visitorToken.length).toBeGreaterThanOrEqual(40);

    const thread = (await agentGet(`/v1/threads/${threadId}`)).json().data;
    expect(thread).toMatchObject({
      id: threadId,
      connectionId: widget.connection.id,
      integrationKey: 'livechat',
      status: 'open',
      lastMessagePreview: null,
    });
    const contact = ((await agentGet('/v1/contacts')).json().data as { id: number; name: string; email: string | null }[]).find(
      (c) => c.id === thread.contactId,
    );
    expect(contact?.name).toBe('Ada Visitor');
    // The e-mail the visitor typed is the contact's, for agents to answer by mail later.
    expect(contact?.email).toBe('ada@visitor.test');

    const rows = await ctx.deps.db.selectFrom('livechat_visitors').selectAll().where('thread_id', '=', threadId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(visitorToken).digest('hex'));
    expect(rows[0]!.email).toBe('ada@visitor.test');
    // Nowhere in the row, in any column.
    const { rows: anywhere } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM livechat_visitors v WHERE strpos(v::text, ${visitorToken}) > 0`.execute(ctx.deps.db);
    expect(anywhere[0]!.n).toBe(0);
  });

  it('takes no body at all, an e-mail alone names the contact, and a bad e-mail is 422', async () => {
    const bare = await ctx.app.inject({ method: 'POST', url: url('/conversations') });
    expect(bare.statusCode, bare.body).toBe(201);
    const mailOnly = await startVisitor(ctx.app, widget.key, { email: 'solo@visitor.test' });
    const thread = (await agentGet(`/v1/threads/${mailOnly.threadId}`)).json().data;
    const contacts = (await agentGet('/v1/contacts')).json().data as { id: number; name: string; email: string | null }[];
    expect(contacts.find((c) => c.id === thread.contactId)).toMatchObject({ name: 'solo@visitor.test', email: 'solo@visitor.test' });
    const bareThread = (await agentGet(`/v1/threads/${bare.json().data.threadId}`)).json().data;
    expect(contacts.find((c) => c.id === bareThread.contactId)?.email).toBeNull();
    const bad = await ctx.app.inject({ method: 'POST', url: url('/conversations'), payload: { email: 'not an address' } });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({
      error: { code: 'validation_failed', message: expect.any(String) },
      meta: { requestId: expect.any(String) },
    });
  });
});

describe('POST and GET /v1/livechat/:widgetKey/messages', () => {
  it('a visitor message goes through messaging: 201 Message, in the agent’s thread list, transcript and realtime socket', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'agent.lc@acme.test' });
    const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
      .access_token as string;
    const base = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
    const agent = await openSocket(`${base}/v1/realtime?token=${encodeURIComponent(jwt)}`);
    await agent.frame((f) => f.type === 'ready', 'the agent socket to be ready');

    const visitor = await startVisitor(ctx.app, widget.key, { name: 'Grace' });
    await agent.frame((f) => f.type === 'thread.updated' && f.data.id === visitor.threadId, 'the new thread on the agent socket');
    const res = await visitorSays(ctx.app, widget.key, visitor.token, 'Do you ship to Norway?');
    expect(res.statusCode, res.body).toBe(201);
    const message = res.json().data;
    expect(message).toEqual({
      id: expect.any(Number),
      threadId: visitor.threadId,
      direction: 'inbound',
      externalId: expect.stringMatching(/^lc-/),
      text: 'Do you ship to Norway?',
      status: 'received',
      error: null,
      kind: 'message',
      private: false,
      authorId: null,
      attachments: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const created = await agent.frame(
      (f) => f.type === 'message.created' && f.data.id === message.id,
      'message.created on the agent socket',
    );
    expect(created.data).toMatchObject({
      threadId: visitor.threadId,
      direction: 'inbound',
      status: 'received',
      preview: 'Do you ship to Norway?',
    });

    const threads = (await agentGet('/v1/threads')).json().data as { id: number; lastMessagePreview: string }[];
    expect(threads.find((t) => t.id === visitor.threadId)?.lastMessagePreview).toBe('Do you ship to Norway?');
    const transcript = (await agentGet(`/v1/threads/${visitor.threadId}/messages`)).json().data;
    expect(transcript).toEqual([message]);
    // No inbox row: there is no provider to retry, so the visitor routes apply it directly.
    const rows = await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('integration_key', '=', 'livechat').execute();
    expect(rows).toEqual([]);
    agent.ws.close();
  });

  it('GET answers the visitor’s own thread as a cursor page, newest first, and nothing of another visitor', async () => {
    const a = await startVisitor(ctx.app, widget.key);
    const b = await startVisitor(ctx.app, widget.key);
    for (const text of ['one', 'two', 'three']) expect((await visitorSays(ctx.app, widget.key, a.token, text)).statusCode).toBe(201);
    expect((await visitorSays(ctx.app, widget.key, b.token, 'b only')).statusCode).toBe(201);

    const first = await ctx.app.inject({ method: 'GET', url: url('/messages?limit=2'), headers: a.headers });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data.map((m: { text: string }) => m.text)).toEqual(['three', 'two']);
    expect(first.json().meta).toEqual({ requestId: expect.any(String), nextCursor: expect.any(String) });
    const second = await ctx.app.inject({
      method: 'GET',
      url: url(`/messages?limit=2&cursor=${first.json().meta.nextCursor}`),
      headers: a.headers,
    });
    expect(second.json().data.map((m: { text: string }) => m.text)).toEqual(['one']);
    expect(second.json().meta.nextCursor).toBeUndefined();

    const ofB = await ctx.app.inject({ method: 'GET', url: url('/messages'), headers: b.headers });
    expect(ofB.json().data.map((m: { text: string; threadId: number }) => [m.text, m.threadId])).toEqual([['b only', b.threadId]]);
    const badCursor = await ctx.app.inject({ method: 'GET', url: url('/messages?cursor=!!'), headers: a.headers });
    expect(badCursor.statusCode).toBe(422);
  });

  it('never shows the visitor the sender’s error text of a failed reply', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    await ctx.deps.db
      .insertInto('messages')
      .values({
        workspace_id: tenant.workspace.id,
        thread_id: v.threadId,
        connection_id: widget.connection.id,
        direction: 'outbound',
        text: 'lost',
        status: 'failed',
        error: 'send failed: connection to 10.0.0.5 refused',
      })
      .execute();
    const read = await ctx.app.inject({ method: 'GET', url: url('/messages'), headers: v.headers });
    expect(read.json().data).toEqual([expect.objectContaining({ text: 'lost', status: 'failed', error: null })]);
    expect(read.body).not.toContain('10.0.0.5');
  });

  it('refuses empty and over-long text (422)', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    expect((await visitorSays(ctx.app, widget.key, v.token, '')).statusCode).toBe(422);
    expect((await visitorSays(ctx.app, widget.key, v.token, 'x'.repeat(4097))).statusCode).toBe(422);
    expect((await visitorSays(ctx.app, widget.key, v.token, 'x'.repeat(4096))).statusCode).toBe(201);
  });
});

describe('widget key and visitor token', () => {
  it('an unknown widget key is 404 on every visitor route, whatever the token', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    const tokens = [undefined, 'Bearer nonsense', `Bearer ${v.token}`];
    for (const authorization of tokens) {
      const headers = authorization ? { authorization } : {};
      for (const [method, path] of [
        ['POST', '/conversations'],
        ['POST', '/messages'],
        ['GET', '/messages'],
        ['GET', '/socket?visitorToken=x'],
        ['OPTIONS', '/messages'],
      ] as const) {
        for (const key of ['wk_unknown0000000000', 'no such key!']) {
          const res = await ctx.app.inject({
            method,
            url: `/v1/livechat/${encodeURIComponent(key)}${path}`,
            headers,
            payload: method === 'POST' ? { text: 'hi' } : undefined,
          });
          expect(res.statusCode, `${method} ${path} ${authorization}`).toBe(404);
          expect(res.json().error.code).toBe('not_found');
        }
      }
    }
    // A key of another channel's account is no widget either.
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/livechat/106540352242922/conversations', payload: {} });
    expect(res.statusCode).toBe(404);
  });

  it('serves a widget whose key is as long as a key may be (128 characters); a longer unknown key is 404', async () => {
    const long = await makeWidget(ctx.deps, tenant.workspace.id, { key: `wk_${'k'.repeat(125)}` });
    expect(long.key).toHaveLength(128);
    expect((await ctx.app.inject({ method: 'GET', url: url('/config', long.key) })).statusCode).toBe(200);
    const v = await startVisitor(ctx.app, long.key);
    expect((await visitorSays(ctx.app, long.key, v.token, 'hello')).statusCode).toBe(201);
    expect((await ctx.app.inject({ method: 'GET', url: url('/messages', long.key), headers: v.headers })).statusCode).toBe(200);
    const page = await ctx.app.inject({ method: 'GET', url: `/livechat/${long.key}` });
    expect(page.statusCode).toBe(200);
    const unknown = await ctx.app.inject({ method: 'GET', url: url('/config', `wk_${'u'.repeat(150)}`) });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');
  });

  it('a missing, bad or other widget’s token is 401', async () => {
    const otherWidget = await makeWidget(ctx.deps, tenant.workspace.id);
    const theirs = await startVisitor(ctx.app, otherWidget.key);
    for (const headers of [
      {},
      { authorization: 'Bearer inbox_vt_wrong' },
      { authorization: `Bearer ${theirs.token}` },
      { authorization: `Basic ${theirs.token}` },
    ]) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await ctx.app.inject({
          method,
          url: url('/messages'),
          headers,
          payload: method === 'POST' ? { text: 'hi' } : undefined,
        });
        expect(res.statusCode, `${method} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
    }
  });

  it('a deleted widget is 404 on every visitor route, its page and config too; its key may be connected again', async () => {
    const gone = await makeWidget(ctx.deps, tenant.workspace.id);
    const v = await startVisitor(ctx.app, gone.key);
    const del = await ctx.app.inject({ method: 'DELETE', url: `/v1/connections/${gone.connection.id}`, headers: tenant.headers });
    expect(del.statusCode, del.body).toBe(200);
    for (const [method, path] of [
      ['POST', '/conversations'],
      ['POST', '/messages'],
      ['GET', '/messages'],
      ['POST', '/attachments'],
      ['GET', '/config'],
      ['GET', `/socket?visitorToken=${v.token}`],
    ] as const) {
      const res = await ctx.app.inject({
        method,
        url: url(path, gone.key),
        headers: v.headers,
        payload: method === 'POST' ? { text: 'hi' } : undefined,
      });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await ctx.app.inject({ method: 'GET', url: `/livechat/${gone.key}` })).statusCode).toBe(404);

    // The same key on a new widget is that widget's: the old visitor's token is not.
    const again = await makeWidget(ctx.deps, tenant.workspace.id, { key: gone.key });
    expect(again.connection.id).not.toBe(gone.connection.id);
    expect((await ctx.app.inject({ method: 'GET', url: url('/messages', gone.key), headers: v.headers })).statusCode).toBe(401);
    expect((await startVisitor(ctx.app, gone.key)).token).toEqual(expect.any(String));
  });

  it('a token stops working after 30 days', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    await ctx.deps.db
      .updateTable('livechat_visitors')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('thread_id', '=', v.threadId)
      .execute();
    expect((await ctx.app.inject({ method: 'GET', url: url('/messages'), headers: v.headers })).statusCode).toBe(401);
    const fresh = await startVisitor(ctx.app, widget.key);
    const stored = await ctx.deps.db
      .selectFrom('livechat_visitors')
      .select(['created_at', 'expires_at'])
      .where('thread_id', '=', fresh.threadId)
      .executeTakeFirstOrThrow();
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBe(30 * 24 * 3600 * 1000);
  });

  it('/webhooks/livechat still answers 401', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/livechat', payload: { text: 'x' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('invalid_api_key');
  });
});

const shop = await makeWidget(ctx.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example', 'http://localhost:8080'] });

describe('CORS', () => {
  const conversation = (key: string, origin?: string) =>
    ctx.app.inject({ method: 'POST', url: url('/conversations', key), headers: origin ? { origin } : {}, payload: {} });

  it('an allowed origin gets its CORS headers, on answers and errors alike', async () => {
    const res = await conversation(shop.key, 'https://shop.example');
    expect(res.statusCode).toBe(201);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(res.headers.vary).toMatch(/Origin/);
    expect(res.headers['access-control-expose-headers']).toMatch(/retry-after/);
    const unauthorised = await ctx.app.inject({
      method: 'GET',
      url: url('/messages', shop.key),
      headers: { origin: 'http://localhost:8080' },
    });
    expect(unauthorised.statusCode).toBe(401);
    expect(unauthorised.headers['access-control-allow-origin']).toBe('http://localhost:8080');
  });

  it('answers the preflight of an allowed origin with 204 and the methods and headers the widget uses', async () => {
    const res = await ctx.app.inject({
      method: 'OPTIONS',
      url: url('/messages', shop.key),
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(res.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(res.headers['access-control-allow-headers']).toMatch(/authorization/);
    expect(res.headers['access-control-allow-headers']).toMatch(/content-type/);
  });

  it('answers the preflight of GET …/config too, which a page sends before reading the settings with a header of its own', async () => {
    const res = await ctx.app.inject({
      method: 'OPTIONS',
      url: url('/config', shop.key),
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-request-id' },
    });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect(res.headers['access-control-allow-methods']).toMatch(/GET/);
    const refused = await ctx.app.inject({
      method: 'OPTIONS',
      url: url('/config', shop.key),
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('refuses another origin with 403 and no CORS headers, preflight included; writes nothing', async () => {
    const before = await ctx.deps.db
      .selectFrom('livechat_visitors')
      .select(ctx.deps.db.fn.countAll<number>().as('n'))
      .where('connection_id', '=', shop.connection.id)
      .executeTakeFirstOrThrow();
    for (const origin of ['https://evil.example', 'https://shop.example.evil.example', 'http://shop.example', 'null']) {
      const res = await conversation(shop.key, origin);
      expect(res.statusCode, origin).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await ctx.app.inject({
        method: 'OPTIONS',
        url: url('/conversations', shop.key),
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      expect(preflight.statusCode).toBe(403);
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    }
    const after = await ctx.deps.db
      .selectFrom('livechat_visitors')
      .select(ctx.deps.db.fn.countAll<number>().as('n'))
      .where('connection_id', '=', shop.connection.id)
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('a widget without allowedOrigins takes any origin; the service’s own origin (the hosted page) is always allowed', async () => {
    const any = await conversation(widget.key, 'https://anywhere.example');
    expect(any.statusCode).toBe(201);
    expect(any.headers['access-control-allow-origin']).toBe('https://anywhere.example');
    const own = await ctx.app.inject({
      method: 'POST',
      url: url('/conversations', shop.key),
      headers: { origin: 'http://inbox.internal:3000', host: 'inbox.internal:3000' },
      payload: {},
    });
    expect(own.statusCode).toBe(201);
    // Requests without Origin (a custom widget's server, curl) are not browsers: no CORS involved.
    const bare = await conversation(shop.key);
    expect(bare.statusCode).toBe(201);
    expect(bare.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('limits', () => {
  it('20 messages a minute per visitor, then 429 with retry-after; another visitor is not held back', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    const answers = await Promise.all(Array.from({ length: 22 }, (_, i) => visitorSays(ctx.app, widget.key, v.token, `burst ${i}`)));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(20);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(2);
    for (const r of refused) {
      expect(r.json().error.code).toBe('rate_limited');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    const stored = await ctx.deps.db.selectFrom('messages').select('id').where('thread_id', '=', v.threadId).execute();
    expect(stored).toHaveLength(20);
    const other = await startVisitor(ctx.app, widget.key);
    expect((await visitorSays(ctx.app, widget.key, other.token, 'hello')).statusCode).toBe(201);
  });

  it('30 new conversations a minute per client address, then 429 with retry-after; another address is not held back', async () => {
    const start = (remoteAddress: string) => ctx.app.inject({ method: 'POST', url: url('/conversations'), payload: {}, remoteAddress });
    const answers = await Promise.all(Array.from({ length: 32 }, () => start('203.0.113.77')));
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(30);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(2);
    expect(refused[0]!.json().error.code).toBe('rate_limited');
    expect(Number(refused[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await start('203.0.113.78')).statusCode).toBe(201);
  });
});

describe('logs', () => {
  it('never carry a visitor token', async () => {
    const v = await startVisitor(ctx.app, widget.key);
    await visitorSays(ctx.app, widget.key, v.token, 'log me not');
    await ctx.app.inject({ method: 'GET', url: url(`/socket?visitorToken=${v.token}`) });
    expect(logLines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logLines)).not.toContain(v.token);
  });
});

describe('maintenance', () => {
  it('deletes a visitor (token hash, address) a day after its token ended, and keeps its conversation', async () => {
    const ended = await startVisitor(ctx.app, widget.key);
    const live = await startVisitor(ctx.app, widget.key);
    expect((await visitorSays(ctx.app, widget.key, ended.token, 'an old chat')).statusCode).toBe(201);
    const now = new Date(Date.now() + 31 * 24 * 3600 * 1000);
    await ctx.deps.db
      .updateTable('livechat_visitors')
      .set({ expires_at: new Date(now.getTime() + 3600_000) })
      .where('thread_id', '=', live.threadId)
      .execute();
    const pruned = await pruneExpired(ctx.deps.db, now);
    expect(pruned.livechatVisitors).toBeGreaterThanOrEqual(1);
    const left = await ctx.deps.db
      .selectFrom('livechat_visitors')
      .select('thread_id')
      .where('thread_id', 'in', [ended.threadId, live.threadId])
      .execute();
    expect(left.map((r) => r.thread_id)).toEqual([live.threadId]);
    const transcript = await agentGet(`/v1/threads/${ended.threadId}/messages`);
    expect(transcript.json().data.map((m: { text: string }) => m.text)).toEqual(['an old chat']);
  });
});
