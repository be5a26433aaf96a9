import { describe, expect, it } from 'vitest';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);

const create = (payload: Record<string, unknown>) =>
  ctx.app.inject({
    method: 'POST',
    url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
    headers: adminHeaders(),
    payload: { name: 'x', ...payload },
  });
const patch = (id: number, payload: Record<string, unknown>) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers: tenant.headers, payload });
const config = (key: string, headers: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'GET', url: `/v1/livechat/${key}/config`, headers });
const connectionRows = async () =>
  (
    await ctx.deps.db
      .selectFrom('connections')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
  ).n;

describe("live chat settings (docs/livechat.md, 'Settings')", () => {
  it('a new widget has none: defaults in the connection and in the config the widget reads', async () => {
    const w = await makeWidget(ctx.deps, tenant.workspace.id);
    expect(w.connection).toMatchObject({ title: null, colour: null, greeting: null, preChatForm: { name: false, email: false } });
    const res = await config(w.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ title: null, colour: null, greeting: null, preChatForm: { name: false, email: false } });
  });

  it('set on create and changed with PATCH; the widget config and the hosted page follow', async () => {
    const res = await create({
      integrationKey: 'livechat',
      title: '  Acme help ',
      colour: '#AA3300',
      greeting: 'Hello! Ask us about sizes.',
      preChatForm: { name: true, email: false },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { id, externalAccountId: key } = res.json().data;
    expect(res.json().data).toMatchObject({ title: 'Acme help', colour: '#aa3300', greeting: 'Hello! Ask us about sizes.' });
    expect((await config(key)).json().data).toEqual({
      title: 'Acme help',
      colour: '#aa3300',
      greeting: 'Hello! Ask us about sizes.',
      preChatForm: { name: true, email: false },
    });
    expect((await ctx.app.inject({ method: 'GET', url: `/livechat/${key}` })).body).toContain('<title>Acme help</title>');

    const changed = await patch(id, { title: null, colour: '#123456', preChatForm: { name: false, email: true } });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().data).toMatchObject({
      title: null,
      colour: '#123456',
      greeting: 'Hello! Ask us about sizes.',
      preChatForm: { name: false, email: true },
    });
    expect((await config(key)).json().data).toMatchObject({ title: null, colour: '#123456', preChatForm: { name: false, email: true } });
    // The list shows them too.
    const listed = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers })).json().data as {
      id: number;
      colour?: string;
    }[];
    expect(listed.find((c) => c.id === id)?.colour).toBe('#123456');
  });

  it('bad values are 422 naming the field, and write nothing', async () => {
    const w = await makeWidget(ctx.deps, tenant.workspace.id, { name: 'Kept' });
    const before = await connectionRows();
    for (const [field, value] of [
      ['colour', 'red'],
      ['colour', '#12345'],
      ['colour', '#12345g'],
      ['title', ''],
      ['title', 'x'.repeat(101)],
      ['greeting', 'x'.repeat(1001)],
      ['preChatForm', { name: 'yes', email: false }],
      ['preChatForm', { name: true }],
      ['preChatForm', { name: true, email: true, phone: true }],
    ] as const) {
      const made = await create({ integrationKey: 'livechat', [field]: value });
      expect(made.statusCode, `${field} ${JSON.stringify(value)}`).toBe(422);
      expect(made.json().error.code).toBe('validation_failed');
      expect(made.json().error.message).toContain(field);
      const changed = await patch(w.connection.id, { name: 'Changed', [field]: value });
      expect(changed.statusCode, `${field} ${JSON.stringify(value)}`).toBe(422);
      expect(changed.json().error.message).toContain(field);
    }
    expect(await connectionRows()).toBe(before);
    const row = await ctx.deps.db.selectFrom('connections').selectAll().where('id', '=', w.connection.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'Kept', livechat_colour: null, livechat_title: null });
  });

  it('only a livechat connection has them: 422 naming the field on another channel', async () => {
    const before = await connectionRows();
    const made = await create({ integrationKey: 'sms', externalAccountId: '+15550002', greeting: 'Hi' });
    expect(made.statusCode).toBe(422);
    expect(made.json().error.message).toBe('greeting applies to livechat connections only');
    expect(await connectionRows()).toBe(before);
    const sms = (await create({ integrationKey: 'sms', externalAccountId: '+15550003' })).json().data;
    expect(sms).not.toHaveProperty('preChatForm');
    const changed = await patch(sms.id, { preChatForm: { name: true, email: true } });
    expect(changed.statusCode).toBe(422);
    expect(changed.json().error.message).toBe('preChatForm applies to livechat connections only');
  });

  it('the pre-chat form binds the visitor API: a required field missing is 422; given, it goes on the contact', async () => {
    const w = await makeWidget(ctx.deps, tenant.workspace.id);
    await patch(w.connection.id, { preChatForm: { name: true, email: true } });
    const visitorsBefore = await ctx.deps.db.selectFrom('livechat_visitors').select('id').execute();
    for (const [body, field] of [
      [{}, 'name'],
      [{ email: 'ana@example.test' }, 'name'],
      [{ name: 'Ana' }, 'email'],
    ] as const) {
      const res = await ctx.app.inject({ method: 'POST', url: `/v1/livechat/${w.key}/conversations`, payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().error.message).toBe(`${field} is required: this widget's pre-chat form asks for it`);
    }
    expect(await ctx.deps.db.selectFrom('livechat_visitors').select('id').execute()).toHaveLength(visitorsBefore.length);
    const visitor = await startVisitor(ctx.app, w.key, { name: 'Ana', email: 'ana@example.test' });
    const thread = (await ctx.app.inject({ method: 'GET', url: `/v1/threads/${visitor.threadId}`, headers: tenant.headers })).json().data;
    const contact = (await ctx.app.inject({ method: 'GET', url: `/v1/contacts/${thread.contactId}`, headers: tenant.headers })).json().data;
    expect(contact).toMatchObject({ name: 'Ana', email: 'ana@example.test' });
  });

  it('the config answers the origins the widget allows, with CORS, and 403 to others', async () => {
    const w = await makeWidget(ctx.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example'] });
    const ok = await config(w.key, { origin: 'https://shop.example' });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('https://shop.example');
    expect((await config(w.key, { origin: 'https://other.example' })).statusCode).toBe(403);
    expect((await config('wk_none')).statusCode).toBe(404);
  });
});
