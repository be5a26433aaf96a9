import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_TEMPLATES, startFakeProviders } from '../../harness/fake-providers.js';
import { CREDENTIALS_DO_NOT_OPEN } from '../../src/connections/connection-credentials.js';
import { SYNC_TEMPLATES_QUEUE } from '../../src/connections/sync-templates.queue.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const SECRET = 'templates-webhook-secret';
const TOKEN = 'EAAG-templates-token-0123456789';
const WABA = '102290129340398';
const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET, apiBaseUrl: fake.baseUrls.whatsapp } }) },
});
const tenant = await makeTenant(ctx.deps);
const readOnly = await makeTenant(ctx.deps, { scopes: ['read'] });
const json = { ...tenant.headers, 'content-type': 'application/json' };
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
  externalAccountId: '106540352242922',
  credentials: { accessToken: TOKEN },
});
const TEMPLATES_PATH = `/graph/v23.0/${WABA}/message_templates`;
const SEND_PATH = '/graph/v23.0/106540352242922/messages';

beforeEach(() => fake.reset());

const patch = (id: number, body: Record<string, unknown>) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers: json, payload: body });
const startSync = (id: number, headers: Record<string, string> = tenant.headers) =>
  ctx.app.inject({ method: 'POST', url: `/v1/connections/${id}/templates/sync`, headers });
const listed = async (id: number) =>
  (await ctx.app.inject({ method: 'GET', url: `/v1/connections/${id}/templates`, headers: tenant.headers })).json().data;
const connection = async (id: number) => {
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/connections?limit=100', headers: tenant.headers });
  return res.json().data.find((c: { id: number }) => c.id === id);
};
/** Starts a sync and waits for its outcome on the connection. */
async function sync(id: number) {
  const res = await startSync(id);
  expect(res.statusCode).toBe(202);
  return waitFor(async () => {
    const c = await connection(id);
    return c.templatesSync?.status !== 'running' ? c : undefined;
  }, 'the sync to finish');
}

/** A contact writes in on WhatsApp; answers the thread the worker made. */
async function inboundThread(from: string) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = '106540352242922';
  value.contacts[0].wa_id = from;
  value.messages[0].from = from;
  value.messages[0].id = `wamid.in-${from}`;
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
  return waitFor(
    () => ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', `wamid.in-${from}`).executeTakeFirst(),
    'the inbound message',
  ).then((m) => m.thread_id);
}

const reply = (threadId: number, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers: { ...json, ...headers }, payload });
const outboundCount = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('direction', '=', 'outbound')
        .executeTakeFirstOrThrow()
    ).n,
  );
const settled = (id: number) =>
  waitFor(async () => {
    const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);

describe('businessAccountId', () => {
  it('is set by PATCH and by the engage create, shown on the connection, and refused for other channels', async () => {
    const fresh = await makeConnection(ctx.deps, tenant.workspace.id);
    expect((await connection(fresh.id)).businessAccountId).toBeNull();
    const set = await patch(fresh.id, { businessAccountId: WABA });
    expect(set.statusCode).toBe(200);
    expect(set.json().data).toMatchObject({ businessAccountId: WABA, templatesSync: null });

    const created = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
      headers: { ...adminHeaders(), 'content-type': 'application/json' },
      payload: { integrationKey: 'whatsapp', externalAccountId: '555000111', name: 'Second number', businessAccountId: '777' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().data.businessAccountId).toBe('777');

    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    const refused = await patch(sms.id, { businessAccountId: WABA });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.message).toContain('whatsapp connections only');
    const notDigits = await patch(fresh.id, { businessAccountId: 'waba one' });
    expect(notDigits.statusCode).toBe(422);
    const cleared = await patch(fresh.id, { businessAccountId: null });
    expect(cleared.json().data.businessAccountId).toBeNull();
  });
});

describe('a connection that comes to name another WABA', () => {
  it('forgets the templates of the one before, and a sync still reading it stores nothing', async () => {
    const line = await makeConnection(ctx.deps, tenant.workspace.id, {
      externalAccountId: '106540352240001',
      credentials: { accessToken: TOKEN },
    });
    await patch(line.id, { businessAccountId: WABA });
    await sync(line.id);
    expect(await listed(line.id)).toHaveLength(3);
    // The same id again is no change.
    expect((await patch(line.id, { businessAccountId: WABA })).json().data.templatesSync.status).toBe('succeeded');
    expect(await listed(line.id)).toHaveLength(3);
    const moved = await patch(line.id, { businessAccountId: '987654321' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().data.templatesSync).toBeNull();
    expect(await listed(line.id)).toEqual([]);

    // A sync of the first WABA, still reading when the connection moves on, keeps nothing of it.
    await patch(line.id, { businessAccountId: WABA });
    let release!: () => void;
    fake.behave(TEMPLATES_PATH, { heldUntil: new Promise<void>((r) => (release = r)) });
    const earlier = new Set((await ctx.deps.boss.findJobs(SYNC_TEMPLATES_QUEUE, { key: String(line.id) })).map((j) => j.id));
    const asked = fake.requests.filter((r) => r.path === TEMPLATES_PATH).length;
    expect((await startSync(line.id)).statusCode).toBe(202);
    await waitFor(async () => fake.requests.filter((r) => r.path === TEMPLATES_PATH).length > asked, 'the sync to ask the provider');
    expect((await patch(line.id, { businessAccountId: null })).json().data.templatesSync).toBeNull();
    release();
    await waitFor(async () => {
      const jobs = (await ctx.deps.boss.findJobs(SYNC_TEMPLATES_QUEUE, { key: String(line.id) })).filter((j) => !earlier.has(j.id));
      return jobs.length === 1 && jobs[0]!.state === 'completed';
    }, 'the sync job to complete');
    expect(await listed(line.id)).toEqual([]);
    expect((await connection(line.id)).templatesSync).toBeNull();
  });
});

describe('template sync', () => {
  it('reads every page into the service with the connection token and lists them as Meta gave them', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    const done = await sync(whatsapp.id);
    expect(done.templatesSync).toMatchObject({ status: 'succeeded', error: null });

    const pages = fake.requests.filter((r) => r.path === TEMPLATES_PATH);
    expect(pages.map((r) => new URLSearchParams(r.query).get('after'))).toEqual([null, 'QVFIUmxC']);
    for (const p of pages) expect(p.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const list = await listed(whatsapp.id);
    expect(list).toHaveLength(3);
    const order = FAKE_TEMPLATES[0]!;
    expect(list.find((t: { name: string }) => t.name === 'order_update')).toEqual({
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      status: 'APPROVED',
      components: order.components,
      parameterCount: 2,
    });
    expect(list.find((t: { name: string }) => t.name === 'spring_sale')).toMatchObject({ status: 'REJECTED', parameterCount: 1 });
    expect(list.find((t: { name: string }) => t.name === 'welcome')).toMatchObject({ parameterCount: 0 });
  });

  it('keeps the previous list and records the error when the provider answers 401 or 500', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    await sync(whatsapp.id);
    const before = await listed(whatsapp.id);
    expect(before).toHaveLength(3);

    fake.behave(TEMPLATES_PATH, {
      status: 401,
      body: { error: { message: 'Error validating access token', type: 'OAuthException', code: 190 } },
    });
    const unauthorised = await sync(whatsapp.id);
    expect(unauthorised.templatesSync.status).toBe('failed');
    expect(unauthorised.templatesSync.error).toContain('HTTP 401: Error validating access token');
    expect(await listed(whatsapp.id)).toEqual(before);

    fake.behave(TEMPLATES_PATH, 'server-error');
    const broken = await sync(whatsapp.id);
    expect(broken.templatesSync.error).toContain('HTTP 500');
    expect(broken.templatesSync.error).not.toContain(TOKEN);
    expect(await listed(whatsapp.id)).toEqual(before);
  });

  it('stores a template whose name or text holds a NUL or a lone surrogate as U+FFFD, beside the others', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    const body = (text: string) => [{ type: 'BODY', text }];
    fake.behave(TEMPLATES_PATH, {
      status: 200,
      body: {
        data: [
          { name: 'odd\u0000name', language: 'en_US', category: 'UTILITY', status: 'APPROVED', components: body('a\u0000b \ud800 {{1}}') },
          { name: 'plain', language: 'en_US', category: 'UTILITY', status: 'APPROVED', components: body('hello {{1}}') },
        ],
      },
    });
    const done = await sync(whatsapp.id);
    expect(done.templatesSync).toMatchObject({ status: 'succeeded', error: null });
    const list = await listed(whatsapp.id);
    expect(list.map((t: { name: string }) => t.name).sort()).toEqual(['odd\ufffdname', 'plain']);
    expect(list.find((t: { name: string }) => t.name === 'odd\ufffdname')).toMatchObject({
      components: body('a\ufffdb \ufffd {{1}}'),
      parameterCount: 1,
    });
  });

  it('fails with the reason, keeping the list, when a template name is too long to index', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    await sync(whatsapp.id);
    const before = await listed(whatsapp.id);
    // Random, so PostgreSQL cannot compress it under the index's 2704-byte limit.
    const name = randomBytes(2400).toString('base64url');
    fake.behave(TEMPLATES_PATH, {
      status: 200,
      body: { data: [{ name, language: 'en_US', category: 'UTILITY', status: 'APPROVED', components: [] }] },
    });
    const refused = await sync(whatsapp.id);
    expect(refused.templatesSync.status).toBe('failed');
    expect(refused.templatesSync.error).toContain("the provider's list could not be stored: index row size");
    expect(await listed(whatsapp.id)).toEqual(before);
  });

  it('does not follow a paging.next that leaves the API host, keeping the list', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    await sync(whatsapp.id);
    const before = await listed(whatsapp.id);
    fake.behave(TEMPLATES_PATH, { status: 200, body: { data: [], paging: { next: 'http://198.51.100.7/steal?after=x' } } });
    const refused = await sync(whatsapp.id);
    expect(refused.templatesSync.status).toBe('failed');
    expect(refused.templatesSync.error).toContain('paging.next leaves');
    expect(await listed(whatsapp.id)).toEqual(before);
  });

  it('runs as a sync-templates job: one waits while one runs, so a burst reads the list twice', async () => {
    await patch(whatsapp.id, { businessAccountId: WABA });
    // Earlier tests' syncs of this connection are not this burst's.
    const all = () => ctx.deps.boss.findJobs(SYNC_TEMPLATES_QUEUE, { key: String(whatsapp.id) });
    const earlier = new Set((await all()).map((j) => j.id));
    const jobs = async () => (await all()).filter((j) => !earlier.has(j.id));
    let release!: () => void;
    fake.behave(TEMPLATES_PATH, { heldUntil: new Promise<void>((r) => (release = r)) });
    expect((await startSync(whatsapp.id)).statusCode).toBe(202);
    await waitFor(async () => fake.requests.some((r) => r.path === TEMPLATES_PATH), 'the first sync to ask the provider');
    // The first sync is running (its request held): three more POSTs leave one job waiting.
    const more = await Promise.all([startSync(whatsapp.id), startSync(whatsapp.id), startSync(whatsapp.id)]);
    expect(more.map((r) => r.statusCode)).toEqual([202, 202, 202]);
    expect(more[0]!.json().data.templatesSync.status).toBe('running');
    expect((await jobs()).map((j) => j.state).sort()).toEqual(['active', 'created']);
    release();
    await waitFor(async () => {
      const burst = await jobs();
      return burst.length === 2 && burst.every((j) => j.state === 'completed');
    }, 'both jobs to complete');
    expect((await connection(whatsapp.id)).templatesSync.status).toBe('succeeded');
    expect(fake.requests.filter((r) => r.path === TEMPLATES_PATH)).toHaveLength(4);
    expect(await listed(whatsapp.id)).toHaveLength(3);
    // The job carries ids, never the connection's token.
    for (const j of await jobs()) expect(j.data).toEqual({ workspaceId: tenant.workspace.id, connectionId: whatsapp.id });
  });

  it('is for admins, needs a businessAccountId, and 404s another workspace connection', async () => {
    const readKey = await ctx.app.inject({
      method: 'POST',
      url: `/v1/connections/${whatsapp.id}/templates/sync`,
      headers: { 'x-api-key': (await makeTenant(ctx.deps, { scopes: ['write'] })).apiKey },
    });
    expect(readKey.statusCode).toBe(403);
    const bare = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: TOKEN } });
    const noWaba = await startSync(bare.id);
    expect(noWaba.statusCode).toBe(422);
    expect(noWaba.json().error.message).toContain('businessAccountId');
    expect((await startSync(whatsapp.id, readOnly.headers)).statusCode).toBe(403);
    const other = await ctx.app.inject({ method: 'GET', url: `/v1/connections/${whatsapp.id}/templates`, headers: readOnly.headers });
    expect(other.statusCode).toBe(404);
    expect(fake.requests.filter((r) => r.path.endsWith('/message_templates'))).toHaveLength(0);
  });
});

describe('a sync of a connection whose sealed credentials do not open', () => {
  it('answers 422 with the reason, and queues nothing', async () => {
    const sealed = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: TOKEN } });
    expect((await patch(sealed.id, { businessAccountId: WABA })).statusCode).toBe(200);
    // The sealed value is one that does not open: another key's, or altered.
    await ctx.deps.db
      .updateTable('connections')
      .set({ credentials_sealed: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
      .where('id', '=', sealed.id)
      .execute();
    const res = await startSync(sealed.id);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error).toEqual({ code: 'validation_failed', message: CREDENTIALS_DO_NOT_OPEN });
    expect((await connection(sealed.id)).templatesSync?.status ?? null).not.toBe('running');
  });
});

describe('template replies', async () => {
  await patch(whatsapp.id, { businessAccountId: WABA });
  await sync(whatsapp.id);
  const threadId = await inboundThread('16505550101');

  it('sends the exact template JSON through the reply sender and stores the filled-in body', async () => {
    const res = await reply(threadId, {
      template: { name: 'order_update', language: 'en_US', parameters: { header: ['#42'], body: ['Ann', '#42'] } },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().data.text).toBe('Hi Ann, your order #42 has shipped.');
    const sent = await settled(res.json().data.id);
    expect(sent.status).toBe('sent');
    const request = fake.requests.find((r) => r.path === SEND_PATH);
    expect(request?.response?.status).toBe(200);
    expect(request?.parsed).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16505550101',
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [
          { type: 'header', parameters: [{ type: 'text', text: '#42' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ann' },
              { type: 'text', text: '#42' },
            ],
          },
        ],
      },
    });
  });

  it('sends a template without parameters with no components to fill', async () => {
    const res = await reply(threadId, { template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } });
    expect(res.statusCode).toBe(202);
    expect(res.json().data.text).toBe('Welcome aboard.');
    expect((await settled(res.json().data.id)).status).toBe('sent');
    expect(fake.requests.find((r) => r.path === SEND_PATH)?.parsed).toMatchObject({
      type: 'template',
      template: { name: 'welcome', language: { code: 'en_US' }, components: [] },
    });
  });

  it.each([
    ['without parameters', { name: 'welcome', language: 'en_US' }],
    ['with empty parameters', { name: 'welcome', language: 'en_US', parameters: {} }],
  ])('sends a template without placeholders %s, as if the lists were empty', async (_how, template) => {
    const res = await reply(threadId, { template });
    expect(res.statusCode).toBe(202);
    expect(res.json().data.text).toBe('Welcome aboard.');
    expect((await settled(res.json().data.id)).status).toBe('sent');
    const sends = fake.requests.filter((r) => r.path === SEND_PATH);
    expect(sends.at(-1)?.parsed).toMatchObject({
      type: 'template',
      template: { name: 'welcome', language: { code: 'en_US' }, components: [] },
    });
  });

  it('answers an Idempotency-Key replay with the first answer and sends once', async () => {
    const body = { template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } };
    const first = await reply(threadId, body, { 'idempotency-key': 'tpl-1' });
    const second = await reply(threadId, body, { 'idempotency-key': 'tpl-1' });
    expect(second.statusCode).toBe(202);
    expect(second.json().data.id).toBe(first.json().data.id);
    await settled(first.json().data.id);
    expect(fake.requests.filter((r) => r.path === SEND_PATH)).toHaveLength(1);
  });

  const bare = await makeConnection(ctx.deps, tenant.workspace.id, { externalAccountId: '199999999', credentials: { accessToken: TOKEN } });
  const cases: [string, Record<string, unknown>, string][] = [
    ['an unknown template', { template: { name: 'nope', language: 'en_US', parameters: { body: [] } } }, 'template "nope" (en_US) is not'],
    ['a template in another language', { template: { name: 'welcome', language: 'de', parameters: { body: [] } } }, '"welcome" (de)'],
    [
      'a template not approved',
      { template: { name: 'spring_sale', language: 'en_US', parameters: { body: ['Ann'] } } },
      'template "spring_sale" (en_US) is REJECTED, not APPROVED',
    ],
    [
      'too few body parameters',
      { template: { name: 'order_update', language: 'en_US', parameters: { header: ['#1'], body: ['Ann'] } } },
      'template "order_update" (en_US) takes 2 body parameters; 1 given',
    ],
    [
      'a missing header parameter',
      { template: { name: 'order_update', language: 'en_US', parameters: { body: ['Ann', '#1'] } } },
      'takes 1 header parameters; 0 given',
    ],
    [
      'body parameters left out where the template has some',
      { template: { name: 'order_update', language: 'en_US', parameters: { header: ['#1'] } } },
      'template "order_update" (en_US) takes 2 body parameters; 0 given',
    ],
    [
      'parameters left out where the template has some',
      { template: { name: 'order_update', language: 'en_US' } },
      'takes 1 header parameters; 0 given',
    ],
    ['a parameter that is not a string', { template: { name: 'welcome', language: 'en_US', parameters: { body: [42] } } }, 'body'],
    [
      'text and template together',
      { text: 'hi', template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } },
      'exactly one of "text" and "template"',
    ],
    ['neither text nor template', {}, 'exactly one of "text" and "template"'],
    [
      'a private template',
      { private: true, template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } },
      'a private note is text',
    ],
  ];
  it.each(cases)('refuses %s with a 422 that names the problem, writing nothing', async (_what, body, message) => {
    const before = await outboundCount();
    const res = await reply(threadId, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toContain(message);
    expect(await outboundCount()).toBe(before);
  });

  it('refuses a template with a media header, a URL button placeholder, a coupon code or a carousel, which a reply cannot fill', async () => {
    const body = { type: 'BODY', text: 'Your order has shipped.' };
    await ctx.deps.db
      .insertInto('whatsapp_templates')
      .values(
        [
          ['shipped_photo', [{ type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://x.test/a.jpg'] } }, body]],
          ['shipped_track', [body, { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://x.test/t/{{1}}' }] }]],
          [
            'fall_coupon',
            [
              body,
              {
                type: 'BUTTONS',
                buttons: [
                  { type: 'QUICK_REPLY', text: 'Stop' },
                  { type: 'COPY_CODE', example: '25OFF' },
                ],
              },
            ],
          ],
          ['new_arrivals', [body, { type: 'CAROUSEL', cards: [{ components: [{ type: 'HEADER', format: 'IMAGE' }] }] }]],
        ].map(([name, components]) => ({
          connection_id: whatsapp.id,
          name: name as string,
          language: 'en_US',
          category: 'UTILITY',
          status: 'APPROVED',
          components: JSON.stringify(components),
          parameter_count: 0,
        })),
      )
      .execute();
    const before = await outboundCount();
    for (const [name, what] of [
      ['shipped_photo', 'an IMAGE header'],
      ['shipped_track', 'a URL button with a placeholder'],
      ['fall_coupon', 'a COPY_CODE button'],
      ['new_arrivals', 'a CAROUSEL'],
    ]) {
      const res = await reply(threadId, { template: { name, language: 'en_US' } });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.message).toBe(`template "${name}" (en_US) has ${what}, which a reply cannot fill; send another template`);
    }
    expect(await outboundCount()).toBe(before);
  });

  it('refuses a template on a connection without businessAccountId', async () => {
    const thread = await ctx.deps.db
      .insertInto('threads')
      .values({
        workspace_id: tenant.workspace.id,
        connection_id: bare.id,
        contact_id: (await ctx.deps.db.selectFrom('threads').select('contact_id').where('id', '=', threadId).executeTakeFirstOrThrow())
          .contact_id,
        last_message_preview: '',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await reply(thread.id, { template: { name: 'welcome', language: 'en_US', parameters: { body: [] } } });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toBe(
      'template "welcome" (en_US): the connection has no businessAccountId; set it with PATCH /v1/connections/:id, then sync',
    );
  });
});
