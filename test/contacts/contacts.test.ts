import { afterAll, describe, expect, it } from 'vitest';
import { REALTIME_CHANNEL } from '../../src/realtime/publish.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound, signedInUser } from '../threads/workflow-helpers.js';

const ctx = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = ctx.deps.db;

// Every realtime event published while this file runs, as the api processes receive them.
const listener = await ctx.deps.pool.connect();
const notified: { type: string; workspaceId: number; data: Record<string, unknown> }[] = [];
listener.on('notification', (n) => notified.push(JSON.parse(n.payload ?? '{}')));
await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
afterAll(() => listener.release());

type Method = 'GET' | 'POST' | 'PATCH';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

/** A tenant with an endpoint subscribed to every event, so outbound events are written. */
async function tenantWithEndpoint() {
  const tenant = await makeTenant(ctx.deps);
  const res = await call('POST', '/v1/webhook-endpoints', tenant.headers, { url: 'http://127.0.0.1:9/hook', events: ['*'] });
  expect(res.statusCode).toBe(201);
  return tenant;
}

async function makeContact(workspaceId: number, name: string | null, handles: [string, string][], fields: { email?: string } = {}) {
  const contact = await db
    .insertInto('contacts')
    .values({ workspace_id: workspaceId, name, ...fields })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (const [integrationKey, externalId] of handles) {
    await db
      .insertInto('contact_handles')
      .values({ workspace_id: workspaceId, integration_key: integrationKey, external_id: externalId, contact_id: contact.id })
      .execute();
  }
  return contact;
}

async function makeThread(workspaceId: number, connectionId: number, contactId: number, texts: string[], lastMessageAt: Date) {
  const thread = await db
    .insertInto('threads')
    .values({
      workspace_id: workspaceId,
      connection_id: connectionId,
      contact_id: contactId,
      last_message_at: lastMessageAt,
      last_message_preview: texts.at(-1) ?? null,
      // Every message here is the contact's.
      last_inbound_at: lastMessageAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (const text of texts) {
    await db
      .insertInto('messages')
      .values({
        workspace_id: workspaceId,
        thread_id: thread.id,
        connection_id: connectionId,
        direction: 'inbound',
        external_id: `m-${thread.id}-${text}`,
        text,
        status: 'received',
      })
      .execute();
  }
  return thread;
}

const outboundEvents = (workspaceId: number, type: string) =>
  db
    .selectFrom('webhook_events')
    .select('body')
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .execute()
    .then((rows) => rows.map((r) => JSON.parse(r.body as unknown as string).data));

describe('GET /v1/contacts?q=', () => {
  it('finds contacts by a piece of their name, e-mail or handle, ignoring case', async () => {
    const tenant = await makeTenant(ctx.deps);
    const other = await makeTenant(ctx.deps);
    const ada = await makeContact(tenant.workspace.id, 'Ada Lovelace', [['whatsapp', '447700900111']]);
    const bo = await makeContact(tenant.workspace.id, 'Bo', [['email', 'bo@shop.test']], { email: 'BO.Personal@mail.test' });
    const pct = await makeContact(tenant.workspace.id, '100% Cotton', []);
    await makeContact(other.workspace.id, 'Ada Elsewhere', [['whatsapp', '447700900111x']]);
    const ids = async (q: string) =>
      (await call('GET', `/v1/contacts?q=${encodeURIComponent(q)}`, tenant.headers)).json().data.map((c: { id: number }) => c.id);
    expect(await ids('lovelace')).toEqual([ada.id]);
    expect(await ids('900111')).toEqual([ada.id]);
    expect(await ids('personal@')).toEqual([bo.id]);
    expect(await ids('SHOP.test')).toEqual([bo.id]);
    expect(await ids('0%')).toEqual([pct.id]);
    expect(await ids('_')).toEqual([]);
    expect(await ids('')).toEqual([pct.id, bo.id, ada.id]);
    const paged = (await call('GET', '/v1/contacts?q=o&limit=2', tenant.headers)).json();
    expect(paged.data.map((c: { id: number }) => c.id)).toEqual([pct.id, bo.id]);
    const rest = (await call('GET', `/v1/contacts?q=o&limit=2&cursor=${paged.meta.nextCursor}`, tenant.headers)).json();
    expect(rest.data.map((c: { id: number }) => c.id)).toEqual([ada.id]);
    expect(rest.meta.nextCursor).toBeUndefined();
  });
});

describe('GET and PATCH /v1/contacts/:id', () => {
  it('reads a contact and changes its fields, announcing contact.updated', async () => {
    const tenant = await tenantWithEndpoint();
    const c = await makeContact(tenant.workspace.id, null, [['sms', '+14155550100']]);
    const got = await call('GET', `/v1/contacts/${c.id}`, tenant.headers);
    expect(got.json().data).toEqual({
      id: c.id,
      name: null,
      handles: [{ integrationKey: 'sms', externalId: '+14155550100' }],
      email: null,
      phone: null,
      attributes: {},
      createdAt: expect.any(String),
    });
    const attributes = { plan: 'pro', seats: 12, vip: true };
    const res = await call('PATCH', `/v1/contacts/${c.id}`, tenant.headers, {
      name: 'Cy',
      email: 'cy@acme.test',
      phone: '+1 415 555 0100',
      attributes,
    });
    expect(res.statusCode).toBe(200);
    const contact = res.json().data;
    expect(contact).toMatchObject({ id: c.id, name: 'Cy', email: 'cy@acme.test', phone: '+1 415 555 0100', attributes });
    expect((await call('GET', `/v1/contacts/${c.id}`, tenant.headers)).json().data).toEqual(contact);
    expect(await outboundEvents(tenant.workspace.id, 'contact.updated')).toEqual([contact]);
    await waitFor(async () => notified.find((e) => e.type === 'contact.updated' && e.data.id === c.id), 'contact.updated on the bus');
    // null clears a field; attributes are replaced whole
    const cleared = (await call('PATCH', `/v1/contacts/${c.id}`, tenant.headers, { email: null, attributes: { plan: 'free' } })).json()
      .data;
    expect(cleared).toMatchObject({ name: 'Cy', email: null, attributes: { plan: 'free' } });
  });

  it('refuses attributes of the wrong shape and other bad input with 422, writing nothing', async () => {
    const tenant = await tenantWithEndpoint();
    const c = await makeContact(tenant.workspace.id, 'Dee', []);
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    const tooBig = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'x'.repeat(900)]));
    const bad = [
      { attributes: { nested: { a: 1 } } },
      { attributes: { list: [1, 2] } },
      { attributes: { nothing: null } },
      { attributes: 'plan=pro' },
      { attributes: tooMany },
      { attributes: tooBig },
      { attributes: { '': 'empty key' } },
      { email: 'not an address' },
      { phone: 'call me' },
      { name: '' },
      { handles: [] },
    ];
    for (const body of bad) {
      const res = await call('PATCH', `/v1/contacts/${c.id}`, tenant.headers, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 60)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect((await call('PATCH', `/v1/contacts/${c.id}`, tenant.headers, { attributes: fifty })).statusCode).toBe(200);
    const after = await db.selectFrom('contacts').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ name: 'Dee', email: null, phone: null, attributes: fifty });
    expect(await outboundEvents(tenant.workspace.id, 'contact.updated')).toHaveLength(1);
  });
});

describe('POST /v1/contacts/:id/merge', () => {
  it('moves the other contact’s handles and threads here, folding threads on a shared connection', async () => {
    const tenant = await tenantWithEndpoint();
    const w = tenant.workspace.id;
    const wa = await makeConnection(ctx.deps, w);
    const sms = await makeConnection(ctx.deps, w, { integrationKey: 'sms' });
    const keep = await makeContact(w, 'Eve', [['whatsapp', '111']], { email: 'eve@acme.test' });
    const dup = await makeContact(w, 'Eve (phone)', [
      ['sms', '+15550001'],
      ['whatsapp', '222'],
    ]);
    await db
      .updateTable('contacts')
      .set({ phone: '+15550001', attributes: JSON.stringify({ source: 'sms', plan: 'old' }) })
      .where('id', '=', dup.id)
      .execute();
    await db
      .updateTable('contacts')
      .set({ attributes: JSON.stringify({ plan: 'pro' }) })
      .where('id', '=', keep.id)
      .execute();
    const keptThread = await makeThread(w, wa.id, keep.id, ['hello'], new Date('2026-01-01T10:00:00Z'));
    const foldedThread = await makeThread(w, wa.id, dup.id, ['later one', 'latest'], new Date('2026-01-02T10:00:00Z'));
    const movedThread = await makeThread(w, sms.id, dup.id, ['by sms'], new Date('2026-01-01T08:00:00Z'));

    const res = await call('POST', `/v1/contacts/${keep.id}/merge`, tenant.headers, { contactId: dup.id });
    expect(res.statusCode).toBe(200);
    const merged = res.json().data;
    expect(merged).toMatchObject({
      id: keep.id,
      name: 'Eve',
      email: 'eve@acme.test',
      phone: '+15550001',
      attributes: { plan: 'pro', source: 'sms' },
    });
    expect(merged.handles).toHaveLength(3);
    expect(merged.handles).toEqual(
      expect.arrayContaining([
        { integrationKey: 'sms', externalId: '+15550001' },
        { integrationKey: 'whatsapp', externalId: '222' },
      ]),
    );

    expect((await call('GET', `/v1/contacts/${dup.id}`, tenant.headers)).statusCode).toBe(404);
    const threads = await db.selectFrom('threads').selectAll().where('workspace_id', '=', w).orderBy('id').execute();
    expect(threads.map((t) => [t.id, t.contact_id])).toEqual([
      [keptThread.id, keep.id],
      [movedThread.id, keep.id],
    ]);
    // The kept thread's reply window runs from the contact's latest message, whichever thread it was in.
    expect(threads[0]).toMatchObject({
      last_message_preview: 'latest',
      last_message_at: foldedThread.last_message_at,
      last_inbound_at: foldedThread.last_message_at,
    });
    const texts = await db.selectFrom('messages').select(['thread_id', 'text']).where('workspace_id', '=', w).orderBy('id').execute();
    expect(texts).toEqual([
      { thread_id: keptThread.id, text: 'hello' },
      { thread_id: keptThread.id, text: 'later one' },
      { thread_id: keptThread.id, text: 'latest' },
      { thread_id: movedThread.id, text: 'by sms' },
    ]);
    const transcript = (await call('GET', `/v1/threads/${keptThread.id}/messages`, tenant.headers)).json().data;
    expect(transcript).toHaveLength(3);

    expect(await outboundEvents(w, 'contact.merged')).toEqual([{ contact: merged, mergedContactId: dup.id }]);
    await waitFor(
      async () => notified.find((e) => e.type === 'contact.merged' && e.data.mergedContactId === dup.id),
      'contact.merged on the bus',
    );
    // Each thread that stays is announced as it now is: its contact, and the messages folded in.
    const updated = (await outboundEvents(w, 'thread.updated')).sort((a, b) => a.id - b.id);
    expect(updated).toEqual([
      expect.objectContaining({ id: keptThread.id, contactId: keep.id, lastMessagePreview: 'latest' }),
      expect.objectContaining({ id: movedThread.id, contactId: keep.id, lastMessagePreview: 'by sms' }),
    ]);
    await waitFor(
      async () => notified.find((e) => e.type === 'thread.updated' && e.data.id === movedThread.id && e.data.contactId === keep.id),
      'thread.updated on the bus',
    );
  });

  it('keeps the unread messages of a folded thread unread on the thread that stays', async () => {
    const tenant = await tenantWithEndpoint();
    const wa = await makeConnection(ctx.deps, tenant.workspace.id);
    const keptId = await inbound(ctx, wa, '4915100000001', `wamid.unread-a-${wa.id}`);
    expect((await call('POST', `/v1/threads/${keptId}/read`, tenant.headers)).statusCode).toBe(200);
    await inbound(ctx, wa, '4915100000001', `wamid.unread-b-${wa.id}`);
    const foldedId = await inbound(ctx, wa, '4915100000002', `wamid.unread-c-${wa.id}`);
    await inbound(ctx, wa, '4915100000002', `wamid.unread-d-${wa.id}`);
    const thread = async (id: number) => (await call('GET', `/v1/threads/${id}`, tenant.headers)).json().data;
    const [kept, folded] = [await thread(keptId), await thread(foldedId)];
    expect([kept.unreadCount, folded.unreadCount]).toEqual([1, 2]);

    const res = await call('POST', `/v1/contacts/${kept.contactId}/merge`, tenant.headers, { contactId: folded.contactId });
    expect(res.statusCode, res.body).toBe(200);
    expect((await call('GET', `/v1/threads/${foldedId}`, tenant.headers)).statusCode).toBe(404);
    // Three of the contact's messages came after the agent last read the thread that stays.
    expect(await thread(keptId)).toMatchObject({ unreadCount: 3, agentLastSeenAt: kept.agentLastSeenAt });
    const updated = (await outboundEvents(tenant.workspace.id, 'thread.updated')).filter((t) => t.id === keptId);
    expect(updated.at(-1)).toMatchObject({ unreadCount: 3 });
  });

  it('keeps the notifications of a folded thread’s messages, pointing at the thread that stays', async () => {
    const tenant = await makeTenant(ctx.deps);
    const wa = await makeConnection(ctx.deps, tenant.workspace.id);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['agent'] });
    const bo = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['agent'] });
    const keptId = await inbound(ctx, wa, '4915100000021', `wamid.notified-a-${wa.id}`);
    const foldedId = await inbound(ctx, wa, '4915100000022', `wamid.notified-b-${wa.id}`);
    const note = await call('POST', `/v1/threads/${foldedId}/messages`, ada.headers, {
      text: 'can you look?',
      private: true,
      mentions: [bo.user.id],
    });
    expect(note.statusCode, note.body).toBe(201);
    const mine = async () => (await call('GET', '/v1/notifications', bo.headers)).json().data;
    expect(await mine()).toMatchObject([{ type: 'mentioned', threadId: foldedId, messageId: note.json().data.id }]);
    const contactOf = async (id: number) => (await call('GET', `/v1/threads/${id}`, tenant.headers)).json().data.contactId;

    const res = await call('POST', `/v1/contacts/${await contactOf(keptId)}/merge`, tenant.headers, {
      contactId: await contactOf(foldedId),
    });
    expect(res.statusCode, res.body).toBe(200);
    // The note moved with the folded thread's messages; the mention of it goes along.
    expect(await mine()).toMatchObject([{ type: 'mentioned', threadId: keptId, messageId: note.json().data.id, readAt: null }]);
    const transcript = (await call('GET', `/v1/threads/${keptId}/messages`, bo.headers)).json().data;
    expect(transcript.map((m: { id: number }) => m.id)).toContain(note.json().data.id);
  });

  it('is all or nothing: a merge that fails at its last step leaves both contacts as they were', async () => {
    const tenant = await makeTenant(ctx.deps);
    const w = tenant.workspace.id;
    const wa = await makeConnection(ctx.deps, w);
    const keep = await makeContact(w, 'Fay', [['whatsapp', '333']]);
    const dup = await makeContact(w, 'Fay 2', [['whatsapp', '444']]);
    await makeThread(w, wa.id, keep.id, ['a'], new Date('2026-01-01T10:00:00Z'));
    await makeThread(w, wa.id, dup.id, ['b'], new Date('2026-01-02T10:00:00Z'));
    const snapshot = async () => ({
      handles: await db.selectFrom('contact_handles').selectAll().where('workspace_id', '=', w).orderBy('external_id').execute(),
      threads: await db.selectFrom('threads').selectAll().where('workspace_id', '=', w).orderBy('id').execute(),
      messages: await db.selectFrom('messages').select(['id', 'thread_id']).where('workspace_id', '=', w).orderBy('id').execute(),
      contacts: await db.selectFrom('contacts').selectAll().where('workspace_id', '=', w).orderBy('id').execute(),
    });
    const before = await snapshot();
    // The merge deletes the other contact after moving everything; make that one step fail.
    await ctx.deps.pool.query(`
      CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
      CREATE TRIGGER refuse_delete BEFORE DELETE ON contacts FOR EACH ROW WHEN (OLD.id = ${dup.id}) EXECUTE FUNCTION refuse_delete();`);
    try {
      const res = await call('POST', `/v1/contacts/${keep.id}/merge`, tenant.headers, { contactId: dup.id });
      expect(res.statusCode).toBe(500);
    } finally {
      await ctx.deps.pool.query('DROP TRIGGER refuse_delete ON contacts; DROP FUNCTION refuse_delete();');
    }
    expect(await snapshot()).toEqual(before);
  });

  it('while the folded thread is changed, replied to and noted: each waits for the merge or goes first, never a 500', async () => {
    const tenant = await makeTenant(ctx.deps);
    const wa = await makeConnection(ctx.deps, tenant.workspace.id);
    const ada = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['admin'] });
    for (let round = 0; round < 4; round++) {
      const keptId = await inbound(ctx, wa, `49151000100${round}`, `wamid.race-a-${round}`);
      const foldedId = await inbound(ctx, wa, `49151000200${round}`, `wamid.race-b-${round}`);
      const contactOf = async (id: number) => (await call('GET', `/v1/threads/${id}`, tenant.headers)).json().data.contactId as number;
      const [into, other] = [await contactOf(keptId), await contactOf(foldedId)];
      const answers = await Promise.all([
        call('POST', `/v1/contacts/${into}/merge`, tenant.headers, { contactId: other }),
        call('PATCH', `/v1/threads/${foldedId}`, ada.headers, { status: 'resolved', labels: ['billing'] }),
        call('POST', `/v1/threads/${foldedId}/messages`, ada.headers, { text: 'On it' }),
        call('POST', `/v1/threads/${foldedId}/messages`, ada.headers, { text: 'a note', private: true }),
      ]);
      expect(answers[0]!.statusCode, answers[0]!.body).toBe(200);
      // Before the merge each applies to the folded thread (and moves with it); after it, the thread is gone.
      for (const res of answers.slice(1)) expect([200, 201, 202, 404], res.body).toContain(res.statusCode);
      expect((await call('GET', `/v1/threads/${foldedId}`, tenant.headers)).statusCode).toBe(404);
      const left = await db.selectFrom('messages').select('thread_id').where('thread_id', '=', foldedId).execute();
      expect(left).toEqual([]);
    }
  });

  it('answers 404 for a contact of another workspace and 422 for itself, writing nothing', async () => {
    const tenant = await makeTenant(ctx.deps);
    const other = await makeTenant(ctx.deps);
    const mine = await makeContact(tenant.workspace.id, 'Gus', [['whatsapp', '555']]);
    const theirs = await makeContact(other.workspace.id, 'Gus', [['whatsapp', '555']]);
    const across = await call('POST', `/v1/contacts/${mine.id}/merge`, tenant.headers, { contactId: theirs.id });
    expect(across.statusCode).toBe(404);
    expect(across.json().error.code).toBe('not_found');
    const self = await call('POST', `/v1/contacts/${mine.id}/merge`, tenant.headers, { contactId: mine.id });
    expect(self.statusCode).toBe(422);
    expect((await call('GET', `/v1/contacts/${theirs.id}`, other.headers)).json().data.handles).toEqual([
      { integrationKey: 'whatsapp', externalId: '555' },
    ]);
    expect((await call('GET', `/v1/contacts/${mine.id}`, tenant.headers)).json().data.handles).toEqual([
      { integrationKey: 'whatsapp', externalId: '555' },
    ]);
  });
});
