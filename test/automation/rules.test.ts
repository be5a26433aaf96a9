import { describe, expect, it } from 'vitest';
import { contactEmailOf } from '../../src/canned-responses/variables.js';
import { adapters } from '../../src/channels/index.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { smsFromContact } from '../helpers/inbound.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { fixture } from '../helpers/webhooks.js';

const ctx = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = ctx.deps.db;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

let seq = 0;
async function workspace() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: `+4930${++seq}` });
  // Every event the workspace's endpoints would receive is written to webhook_events.
  const hook = await call('POST', '/v1/webhook-endpoints', tenant.headers, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  expect(hook.statusCode, hook.body).toBe(201);
  return { tenant, connection };
}

/** A contact writes, applied as the worker applies a delivery; answers the thread's id. */
const contactWrites = (connection: { externalAccountId: string }, from: string, text: string) =>
  smsFromContact(ctx, connection, from, { text });

const thread = async (headers: Record<string, string>, id: number) => (await call('GET', `/v1/threads/${id}`, headers)).json().data;
const rule = async (headers: Record<string, string>, id: number) =>
  (await call('GET', '/v1/automation-rules', headers)).json().data.find((r: { id: number }) => r.id === id);
const transcript = (threadId: number, kind: 'activity' | 'note' | 'message') =>
  db
    .selectFrom('messages')
    .select(['text', 'author_id', 'direction', 'status'])
    .where('thread_id', '=', threadId)
    .where('kind', '=', kind)
    .orderBy('id')
    .execute();
const eventsOf = async (workspaceId: number, type: string) =>
  (
    await db
      .selectFrom('webhook_events')
      .select('body')
      .where('workspace_id', '=', workspaceId)
      .where('type', '=', type)
      .orderBy('id')
      .execute()
  ).map((r) => JSON.parse(r.body as unknown as string).data);

describe('/v1/automation-rules', () => {
  it('lets admins create, list, change, reorder and delete rules; others get 403', async () => {
    const { tenant } = await workspace();
    const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
    expect((await call('GET', '/v1/automation-rules', writer.headers)).statusCode).toBe(403);

    const a = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Refunds',
      event: 'message.created',
      conditions: [{ field: 'text', op: 'contains', value: 'refund' }],
      actions: [{ type: 'add_labels', labels: ['Refund'] }],
    });
    expect(a.statusCode, a.body).toBe(201);
    expect(a.json().data).toEqual({
      id: expect.any(Number),
      name: 'Refunds',
      enabled: true,
      position: 0,
      event: 'message.created',
      match: 'all',
      conditions: [{ field: 'text', op: 'contains', value: 'refund' }],
      actions: [{ type: 'add_labels', labels: ['refund'] }],
      idleMinutes: null,
      statuses: null,
      runs: 0,
      lastRunAt: null,
      lastError: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const b = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Urgent',
      event: 'thread.created',
      actions: [{ type: 'set_priority', priority: 'urgent' }],
    });
    expect(b.json().data.position).toBe(1);
    const moved = await call('PATCH', `/v1/automation-rules/${a.json().data.id}`, tenant.headers, { position: 5, enabled: false });
    expect(moved.json().data).toMatchObject({ position: 5, enabled: false });
    const list = (await call('GET', '/v1/automation-rules', tenant.headers)).json().data;
    expect(list.map((r: { name: string }) => r.name)).toEqual(['Urgent', 'Refunds']);
    expect((await call('DELETE', `/v1/automation-rules/${b.json().data.id}`, tenant.headers)).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/automation-rules/${b.json().data.id}`, tenant.headers)).statusCode).toBe(404);
    const audit = await db.selectFrom('audit_log').select('action').where('workspace_id', '=', tenant.workspace.id).orderBy('id').execute();
    expect(audit.map((r) => r.action).filter((x) => x.startsWith('automation_rule'))).toEqual([
      'automation_rule.created',
      'automation_rule.created',
      'automation_rule.updated',
      'automation_rule.deleted',
    ]);
  });

  it('refuses bad rules with a 422 naming the field, and writes nothing', async () => {
    const { tenant } = await workspace();
    const other = await makeTenant(ctx.deps);
    const { user: stranger } = await makeUser(ctx.deps, other.workspace.id);
    const base = { name: 'R', event: 'message.created', actions: [{ type: 'route' }] };
    const cases: [object, number, RegExp][] = [
      [{ ...base, conditions: [{ field: 'contact.phone', op: 'eq', value: 'x' }] }, 422, /conditions\[0\]\.field/],
      [{ ...base, conditions: [{ field: 'text', op: 'matches', value: '.*' }] }, 422, /op/],
      [{ ...base, conditions: [{ field: 'labels', op: 'in', value: 'vip' }] }, 422, /takes a list/],
      [{ ...base, conditions: [{ field: 'status', op: 'eq', value: 'closed' }] }, 422, /not one of open/],
      [{ ...base, conditions: [{ field: 'text', op: 'is_set', value: 'x' }] }, 422, /takes no value/],
      [{ ...base, conditions: Array.from({ length: 21 }, () => ({ field: 'text', op: 'is_set' })) }, 422, /conditions/],
      // A value of another kind than the field's would never match: refused, not kept as a rule that does nothing.
      [
        { ...base, conditions: [{ field: 'insideBusinessHours', op: 'eq', value: 'false' }] },
        422,
        /conditions\[0\]\.value: .*true or false/,
      ],
      [
        { ...base, conditions: [{ field: 'connectionId', op: 'in', value: [1, '2'] }] },
        422,
        /conditions\[0\]\.value: connectionId is an id/,
      ],
      [{ ...base, conditions: [{ field: 'contact.email', op: 'eq', value: 5 }] }, 422, /conditions\[0\]\.value: contact\.email is text/],
      [{ ...base, conditions: [{ field: 'text', op: 'gt', value: 5 }] }, 422, /conditions\[0\]\.op: gt never holds for text/],
      [
        { ...base, conditions: [{ field: 'teamId', op: 'contains', value: '1' }] },
        422,
        /conditions\[0\]\.op: contains never holds for teamId/,
      ],
      [{ ...base, actions: Array.from({ length: 11 }, () => ({ type: 'route' })) }, 422, /actions/],
      [{ ...base, actions: [{ type: 'assign_user', userId: stranger.id }] }, 422, /actions\[0\]\.userId/],
      [{ ...base, actions: [{ type: 'assign_team', teamId: 999999 }] }, 422, /actions\[0\]\.teamId/],
      [
        { ...base, actions: [{ type: 'reply', template: { name: 'nope', language: 'en', parameters: { body: [] } } }] },
        422,
        /actions\[0\]\.template/,
      ],
      [{ ...base, actions: [{ type: 'reply' }] }, 422, /either text or a template/],
      [{ ...base, actions: [{ type: 'set_status', status: 'snoozed' }] }, 422, /snoozeMinutes/],
      // A union of actions is told by the branch its type names, or by the types there are.
      [{ ...base, actions: [{ type: 'explode' }] }, 422, /^body\.actions\.0\.type must be one of "assign_user", "assign_team", "route",/],
      [{ ...base, actions: [{ type: 'note' }] }, 422, /^body\.actions\.0 must have property "text"$/],
      [{ ...base, actions: [{ type: 'set_priority', priority: 'now' }] }, 422, /^body\.actions\.0\.priority must be equal to one of/],
      [{ ...base, actions: [{ type: 'route', userId: 1 }] }, 422, /^body\.actions\.0 must not have property "userId"$/],
      [{ ...base, event: 'thread.idle' }, 422, /idleMinutes/],
      [{ ...base, event: 'thread.idle', idleMinutes: 4, statuses: ['open'] }, 422, /idleMinutes/],
      [{ ...base, idleMinutes: 60 }, 422, /only a thread.idle rule/],
    ];
    for (const [body, status, message] of cases) {
      const res = await call('POST', '/v1/automation-rules', tenant.headers, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await call('GET', '/v1/automation-rules', tenant.headers)).json().data).toEqual([]);
  });

  it('holds at most 100 rules in a workspace', async () => {
    const { tenant } = await workspace();
    await db
      .insertInto('automation_rules')
      .values(
        Array.from({ length: 100 }, (_, i) => ({
          workspace_id: tenant.workspace.id,
          name: `r${i}`,
          position: i,
          event: 'thread.created' as const,
          actions: JSON.stringify([{ type: 'route' }]),
          idle_minutes: null,
          statuses: null,
        })),
      )
      .execute();
    const res = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'one more',
      event: 'thread.created',
      actions: [{ type: 'route' }],
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toMatch(/at most 100/);
  });
});

describe('rules at work', () => {
  it('route a VIP through the API’s own code: labels, priority, team, activity lines naming the rule, events', async () => {
    const { tenant, connection } = await workspace();
    const team = (await call('POST', '/v1/teams', tenant.headers, { name: 'VIP desk' })).json().data;
    const vip = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'VIP',
      event: 'message.created',
      conditions: [{ field: 'contact.attributes.tier', op: 'eq', value: 'VIP' }],
      actions: [
        { type: 'add_labels', labels: ['vip'] },
        { type: 'set_priority', priority: 'urgent' },
        { type: 'assign_team', teamId: team.id },
        { type: 'note', text: 'VIP {{contact.name}} of {{workspace.name}} wrote ({{unknown.thing}})' },
      ],
    });
    expect(vip.statusCode, vip.body).toBe(201);
    const threadId = await contactWrites(connection, '+15550000001', 'hello');
    // Not yet a VIP: nothing ran.
    expect((await thread(tenant.headers, threadId)).labels).toEqual([]);
    expect((await rule(tenant.headers, vip.json().data.id)).runs).toBe(0);
    const contactId = (await db.selectFrom('threads').select('contact_id').where('id', '=', threadId).executeTakeFirstOrThrow()).contact_id;
    const patched = await call('PATCH', `/v1/contacts/${contactId}`, tenant.headers, { name: 'Grace', attributes: { tier: 'vip' } });
    expect(patched.statusCode, patched.body).toBe(200);

    await contactWrites(connection, '+15550000001', 'hello again');
    expect(await thread(tenant.headers, threadId)).toMatchObject({ labels: ['vip'], priority: 'urgent', teamId: team.id });
    expect((await transcript(threadId, 'activity')).map((l) => l.text)).toEqual([
      'Automation “VIP” added the label vip',
      'Automation “VIP” set the priority to urgent',
      'Automation “VIP” moved the conversation to the team VIP desk',
    ]);
    expect(await transcript(threadId, 'note')).toEqual([
      { text: `VIP Grace of ${tenant.workspace.name} wrote ({{unknown.thing}})`, author_id: null, direction: 'outbound', status: 'sent' },
    ]);
    const notes = (await call('GET', `/v1/threads/${threadId}/messages`, tenant.headers))
      .json()
      .data.filter((m: { kind: string }) => m.kind === 'note');
    expect(notes).toMatchObject([{ authorId: null, automation: true }]);
    const updates = (await eventsOf(tenant.workspace.id, 'thread.updated')).filter((t) => t.id === threadId);
    expect(updates.at(-1)).toMatchObject({ labels: ['vip'], priority: 'urgent', teamId: team.id });
    expect(await rule(tenant.headers, vip.json().data.id)).toMatchObject({ runs: 1, lastRunAt: expect.any(String), lastError: null });
  });

  it('record a failing action in lastError and still apply the others', async () => {
    const { tenant, connection } = await workspace();
    const { user: bo } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Bo' });
    const created = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Greeter',
      event: 'thread.created',
      actions: [
        { type: 'assign_user', userId: bo.id },
        { type: 'add_labels', labels: ['new'] },
        { type: 'reply', text: 'Hi {{contact.name}}, {{agent.name}} is on it' },
      ],
    });
    expect(created.statusCode, created.body).toBe(201);
    // Bo leaves after the rule was saved: assigning to him now fails as the API refuses it.
    await db.updateTable('users').set({ active: false }).where('id', '=', bo.id).execute();
    const threadId = await contactWrites(connection, '+15550000002', 'hi');
    expect(await thread(tenant.headers, threadId)).toMatchObject({ labels: ['new'], assigneeId: null });
    const replies = await db
      .selectFrom('messages')
      .select(['text', 'status'])
      .where('thread_id', '=', threadId)
      .where('direction', '=', 'outbound')
      .where('kind', '=', 'message')
      .execute();
    expect(replies).toEqual([{ text: 'Hi ,  is on it', status: 'queued' }]);
    // The rule's reply says the service wrote it; an API key's has no author and no mark (newest first).
    const byKey = await call('POST', `/v1/threads/${threadId}/messages`, tenant.headers, { text: 'From the API' });
    expect(byKey.statusCode, byKey.body).toBe(202);
    const listed: { text: string; kind: string; authorId: number | null; automation?: true }[] = (
      await call('GET', `/v1/threads/${threadId}/messages`, tenant.headers)
    ).json().data;
    expect(listed.filter((m) => m.kind === 'message' && m.authorId === null).map((m) => [m.text, m.automation])).toEqual([
      ['From the API', undefined],
      ['Hi ,  is on it', true],
      ['hi', undefined],
    ]);
    expect(await rule(tenant.headers, created.json().data.id)).toMatchObject({
      runs: 1,
      lastError: 'actions[0] assign_user: assigneeId names no active user of this workspace',
    });
  });

  it('can still be renamed or disabled once a team they name is deleted; their actions are checked when written', async () => {
    const { tenant } = await workspace();
    const team = (await call('POST', '/v1/teams', tenant.headers, { name: `Gone ${seq}` })).json().data;
    const actions = [{ type: 'assign_team', teamId: team.id }];
    const created = await call('POST', '/v1/automation-rules', tenant.headers, { name: 'Route', event: 'thread.created', actions });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    expect((await call('DELETE', `/v1/teams/${team.id}`, tenant.headers)).statusCode).toBe(200);
    const off = await call('PATCH', `/v1/automation-rules/${id}`, tenant.headers, { name: 'Route (old)', enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toMatchObject({ name: 'Route (old)', enabled: false, actions });
    const again = await call('PATCH', `/v1/automation-rules/${id}`, tenant.headers, { actions });
    expect(again.statusCode).toBe(422);
    expect(again.json().error.message).toMatch(/actions\[0\]\.teamId/);
  });

  it('fire thread.updated on a change through the API, but never on changes rules make', async () => {
    const { tenant, connection } = await workspace();
    const pending = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Waiting',
      event: 'thread.updated',
      conditions: [{ field: 'status', op: 'eq', value: 'pending' }],
      actions: [
        { type: 'add_labels', labels: ['waiting'] },
        { type: 'set_status', status: 'open' },
      ],
    });
    const labeller = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Labeller',
      event: 'thread.created',
      actions: [{ type: 'set_status', status: 'pending' }],
    });
    expect(labeller.statusCode).toBe(201);
    const threadId = await contactWrites(connection, '+15550000003', 'hi');
    // The thread.created rule made it pending; that change fired no thread.updated rule.
    expect(await thread(tenant.headers, threadId)).toMatchObject({ status: 'pending', labels: [] });
    expect((await rule(tenant.headers, pending.json().data.id)).runs).toBe(0);

    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'open' });
    const res = await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'pending' });
    expect(res.statusCode).toBe(200);
    // The answer is the thread as the rule left it; the rule's own set_status fired nothing more.
    expect(res.json().data).toMatchObject({ status: 'open', labels: ['waiting'] });
    expect((await rule(tenant.headers, pending.json().data.id)).runs).toBe(1);
    // A patch that changes nothing fires nothing.
    await call('PATCH', `/v1/threads/${threadId}`, tenant.headers, { status: 'open' });
    expect((await rule(tenant.headers, pending.json().data.id)).runs).toBe(1);
  });

  it("never reply to mail a machine sent (an auto-reply, a bounce), and still apply the rule's other actions", async () => {
    const tenant = await makeTenant(ctx.deps);
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'email.postmark', externalAccountId: 'help@rules.test' });
    const ack = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Acknowledge',
      event: 'message.created',
      actions: [
        { type: 'reply', text: 'Thanks, we have your mail.' },
        { type: 'add_labels', labels: ['acknowledged'] },
      ],
    });
    expect(ack.statusCode, ack.body).toBe(201);
    /** A mail as Postmark posts it, applied as the worker applies its delivery; answers its thread's replies. */
    const mailFrom = async (from: string, headers: { Name: string; Value: string }[]) => {
      const payload = JSON.parse(fixture('email.postmark', 'inbound.json'));
      Object.assign(payload, { OriginalRecipient: 'help@rules.test', FromFull: { Email: from, Name: '' }, Headers: headers });
      payload.MessageID = `${from}-${++seq}@rules.test`;
      const events = adapters['email.postmark'].normalise(payload, { verification: 'signed' });
      await db
        .transaction()
        .execute((trx) =>
          applyDeliveries(ctx.deps, trx, [{ deliveryId: `mail-${seq}`, integrationKey: 'email.postmark', events }], new Date()),
        );
      const { thread_id } = await db
        .selectFrom('messages')
        .select('thread_id')
        .where('external_id', '=', payload.MessageID)
        .executeTakeFirstOrThrow();
      return {
        labels: (await thread(tenant.headers, thread_id)).labels,
        replies: (await transcript(thread_id, 'message')).filter((m) => m.direction === 'outbound').map((m) => m.text),
      };
    };
    expect(await mailFrom('ooo@example.com', [{ Name: 'Auto-Submitted', Value: 'auto-replied' }])).toEqual({
      labels: ['acknowledged'],
      replies: [],
    });
    expect(await mailFrom('MAILER-DAEMON@mx.example.com', [])).toEqual({ labels: ['acknowledged'], replies: [] });
    expect(await mailFrom('ada@example.com', [])).toEqual({ labels: ['acknowledged'], replies: ['Thanks, we have your mail.'] });
    expect(await rule(tenant.headers, ack.json().data.id)).toMatchObject({ runs: 3, lastError: null });
  });

  it('read contact.email as the address a contact mails from, in conditions and variables', async () => {
    const tenant = await makeTenant(ctx.deps);
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'email.postmark', externalAccountId: 'help@corp-rules.test' });
    const corp = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Big Corp',
      event: 'message.created',
      conditions: [{ field: 'contact.email', op: 'contains', value: '@bigcorp.test' }],
      actions: [
        { type: 'add_labels', labels: ['corp'] },
        { type: 'note', text: 'Key account: {{contact.email}}' },
      ],
    });
    expect(corp.statusCode, corp.body).toBe(201);
    const payload = JSON.parse(fixture('email.postmark', 'inbound.json'));
    Object.assign(payload, {
      OriginalRecipient: 'help@corp-rules.test',
      FromFull: { Email: 'Ada@BigCorp.test', Name: 'Ada' },
      Headers: [],
    });
    payload.MessageID = `corp-${++seq}@rules.test`;
    const events = adapters['email.postmark'].normalise(payload, { verification: 'signed' });
    await db
      .transaction()
      .execute((trx) =>
        applyDeliveries(ctx.deps, trx, [{ deliveryId: `corp-${seq}`, integrationKey: 'email.postmark', events }], new Date()),
      );
    const { thread_id } = await db
      .selectFrom('messages')
      .select('thread_id')
      .where('external_id', '=', payload.MessageID)
      .executeTakeFirstOrThrow();
    // The contact has no e-mail of its own, only the address it wrote from (its handle).
    const shown = await thread(tenant.headers, thread_id);
    expect((await call('GET', `/v1/contacts/${shown.contactId}`, tenant.headers)).json().data.email).toBeNull();
    expect(shown.labels).toEqual(['corp']);
    expect((await transcript(thread_id, 'note')).map((n) => n.text)).toEqual(['Key account: ada@bigcorp.test']);
    // The console fills {{contact.email}} the same way.
    expect(contactEmailOf({ email: null, handles: [{ integrationKey: 'email.postmark', externalId: 'ada@bigcorp.test' }] })).toBe(
      'ada@bigcorp.test',
    );
    expect(contactEmailOf({ email: 'set@x.test', handles: [{ integrationKey: 'email', externalId: 'ada@bigcorp.test' }] })).toBe(
      'set@x.test',
    );
    expect(contactEmailOf({ email: null, handles: [{ integrationKey: 'sms', externalId: '+4930123' }] })).toBeNull();
  });

  it('label a conversation opened outside business hours, read in the workspace’s hours', async () => {
    const { tenant, connection } = await workspace();
    // Open only on a weekday other than today's (UTC), so now is outside whatever the time.
    const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
    const other = days[(new Date().getUTCDay() + 3) % 7]!;
    const hours = await call('PATCH', '/v1/workspace', tenant.headers, {
      businessHours: { timezone: 'UTC', weekly: { [other]: [['09:00', '17:00']] }, holidays: [] },
    });
    expect(hours.statusCode, hours.body).toBe(200);
    const created = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Out of hours',
      event: 'thread.created',
      conditions: [{ field: 'insideBusinessHours', op: 'eq', value: false }],
      actions: [{ type: 'add_labels', labels: ['out-of-hours'] }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const threadId = await contactWrites(connection, '+15550000004', 'anyone there?');
    expect((await thread(tenant.headers, threadId)).labels).toEqual(['out-of-hours']);
    // Always open (null): the same rule does not match.
    await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: null });
    const next = await contactWrites(connection, '+15550000005', 'hello?');
    expect((await thread(tenant.headers, next)).labels).toEqual([]);
  });

  it('see the e-mail a live chat visitor gave in the pre-chat form when the conversation opens', async () => {
    const { tenant } = await workspace();
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const created = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Big customer',
      event: 'thread.created',
      conditions: [{ field: 'contact.email', op: 'contains', value: '@bigco.example' }],
      actions: [{ type: 'add_labels', labels: ['enterprise'] }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const visitor = await startVisitor(ctx.app, widget.key!, { name: 'Jo', email: 'jo@bigco.example' });
    expect((await thread(tenant.headers, visitor.threadId)).labels).toEqual(['enterprise']);
    expect((await transcript(visitor.threadId, 'activity')).map((l) => l.text)).toEqual([
      'Automation “Big customer” added the label enterprise',
    ]);
    const other = await startVisitor(ctx.app, widget.key!, { email: 'al@small.example' });
    expect((await thread(tenant.headers, other.threadId)).labels).toEqual([]);
  });
});
