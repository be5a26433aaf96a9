import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor, visitorSays } from '../helpers/livechat.js';
import { signedInUser } from '../helpers/threads.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const WA_SECRET = 'whatsapp-app-secret-0123456789';
const WA_TOKEN = 'whatsapp-access-token-0123456789';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: WA_SECRET, apiBaseUrl: fake.baseUrls.whatsapp, accessToken: WA_TOKEN },
    }),
  },
});
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
await makeConnection(ctx.deps, ws, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });
const endpoint = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: tenant.headers,
  payload: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
});
expect(endpoint.statusCode).toBe(201);

/** Words no other row of the database holds: where one is found after erasure, the person is still there. */
const word = (stem: string) => `${stem}${randomBytes(4).toString('hex')}`;
const person = {
  name: word('Zorvanth'),
  phone: `1999${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`,
  email: `${word('zq')}@mail.test`,
  text: word('Kestrelmint'),
  caption: word('Plumbrowse'),
  fileWord: word('Glimmerfrost'),
  reply: word('Vantorquil'),
  note: word('Mossgrindle'),
  attribute: word('Tarnwhistle'),
};

/** A WhatsApp Cloud delivery from the person, as Meta posts it, signed; answers its message id. */
async function deliver(message: Record<string, unknown>) {
  const body = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = body.entry[0].changes[0].value;
  value.contacts = [{ profile: { name: person.name }, wa_id: person.phone }];
  const id = `wamid.${randomBytes(12).toString('hex')}`;
  value.messages = [{ from: person.phone, id, timestamp: String(Math.floor(Date.now() / 1000)), ...message }];
  const res = await deliverSigned(ctx, 'whatsapp', body);
  expect(res.statusCode, res.body).toBe(200);
  return id;
}

interface Found {
  table: string;
  column: string;
  word: string;
}

/**
 * Every column of every table the service's database user can read (its own schema and
 * pg-boss's), cast to text (bytea searched as bytes), searched for each word, ignoring case.
 */
async function findEverywhere(words: string[]): Promise<Found[]> {
  const { rows: columns } = await sql<{ table_schema: string; table_name: string; column_name: string; data_type: string }>`
    SELECT c.table_schema, c.table_name, c.column_name, c.data_type
    FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
    WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')
      AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'tsvector', 'ARRAY', 'USER-DEFINED')`.execute(
    db,
  );
  const found: Found[] = [];
  for (const c of columns) {
    const ref = sql.raw(`"${c.table_schema}"."${c.table_name}"`);
    const col = sql.raw(`"${c.column_name}"`);
    const match =
      c.data_type === 'bytea' ? sql`position(convert_to(w, 'UTF8') IN ${col}) > 0` : sql`strpos(lower(${col}::text), lower(w)) > 0`;
    const { rows } = await sql<{ w: string }>`
      SELECT w FROM unnest(${words}::text[]) AS w WHERE EXISTS (SELECT 1 FROM ${ref} WHERE ${match})`.execute(db);
    for (const r of rows) found.push({ table: `${c.table_schema}.${c.table_name}`, column: c.column_name, word: r.w });
  }
  return found;
}

describe('POST /v1/contacts/:id/erase', () => {
  it('leaves no word or file of the person in any table, and announces contact.erased', async () => {
    const admin = await signedInUser(ctx.app, ctx.deps, ws, ['admin']);
    const agent = await signedInUser(ctx.app, ctx.deps, ws, ['agent']);

    // Seeded as it happens: two deliveries (a text, a photo fetched from the provider), the
    // contact edited, a reply sent with an Idempotency-Key, a note naming an agent.
    const textId = await deliver({ type: 'text', text: { body: `Hello, ${person.text} here` } });
    const file = fake.media.whatsapp(
      { bytes: Buffer.concat([PNG, Buffer.from(person.fileWord)]), contentType: 'image/png' },
      { token: WA_TOKEN },
    );
    const photoId = await deliver({ type: 'image', image: { caption: person.caption, mime_type: 'image/png', id: file.mediaId } });
    const photo = await waitFor(() => db.selectFrom('messages').selectAll().where('external_id', '=', photoId).executeTakeFirst(), 'photo');
    await waitFor(
      () => db.selectFrom('attachments').select('id').where('message_id', '=', photo.id).where('status', '=', 'stored').executeTakeFirst(),
      'the photo stored',
    );
    const text = await waitFor(() => db.selectFrom('messages').selectAll().where('external_id', '=', textId).executeTakeFirst(), 'text');
    const contactId = (await db.selectFrom('threads').select('contact_id').where('id', '=', text.thread_id).executeTakeFirstOrThrow())
      .contact_id;
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/contacts/${contactId}`,
      headers: tenant.headers,
      payload: { email: person.email, attributes: { note: person.attribute } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${text.thread_id}/messages`,
      headers: { ...admin.headers, 'idempotency-key': word('reply') },
      payload: { text: `Thanks ${person.reply}` },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    const note = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${text.thread_id}/messages`,
      headers: admin.headers,
      payload: { text: `See ${person.note}`, private: true, mentions: [agent.user.id] },
    });
    expect(note.statusCode, note.body).toBe(201);
    await waitFor(
      () => db.selectFrom('messages').select('id').where('id', '=', reply.json().data.id).where('status', '=', 'sent').executeTakeFirst(),
      'the reply sent',
    );
    // Indexed for search, so erasure has a vector to clear.
    await waitFor(
      () =>
        db.selectFrom('messages').select('id').where('id', '=', text.id).where(sql<boolean>`search_vector IS NOT NULL`).executeTakeFirst(),
      'the text indexed',
    );
    const search = async (q: string) =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/messages/search?q=${q}`, headers: tenant.headers })).json().data;
    expect(await search(person.text)).toHaveLength(1);
    expect(await db.selectFrom('notifications').select('id').where('thread_id', '=', text.thread_id).execute()).not.toHaveLength(0);

    const words = Object.values(person);
    const before = await findEverywhere(words);
    // The walk finds the person where a delivery, an edit, a reply and a note put them.
    for (const table of ['public.contacts', 'public.contact_handles', 'public.messages', 'public.webhook_inbox', 'public.webhook_events'])
      expect(before.map((f) => f.table)).toContain(table);
    expect(before).toContainEqual({ table: 'public.attachment_chunks', column: 'data', word: person.fileWord });
    expect(before).toContainEqual({ table: 'public.messages', column: 'search_vector', word: person.text });
    expect(before).toContainEqual({ table: 'public.idempotency_keys', column: 'response', word: person.reply });

    // An agent may not erase; an admin may, and the contact is gone from the API at once.
    const refused = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contactId}/erase`, headers: agent.headers });
    expect(refused.statusCode).toBe(403);
    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contactId}/erase`, headers: admin.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    expect(erased.json().data).toEqual({ contactId });
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/contacts/${contactId}`, headers: tenant.headers })).statusCode).toBe(404);

    const announced = await waitFor(
      () =>
        db
          .selectFrom('webhook_events')
          .select('body')
          .where('workspace_id', '=', ws)
          .where('type', '=', 'contact.erased')
          .executeTakeFirst(),
      'contact.erased',
    );
    expect(JSON.parse(announced.body).data).toEqual({ contactId });
    expect(await findEverywhere(words)).toEqual([]);

    // The conversation keeps its shape, without a word; the routes show nothing of the person.
    const messages = await db.selectFrom('messages').select(['text', 'html', 'email']).where('thread_id', '=', text.thread_id).execute();
    expect(messages.length).toBeGreaterThanOrEqual(4);
    expect(messages.every((m) => m.text === '' && m.html === null && m.email === null)).toBe(true);
    expect(await db.selectFrom('attachments').select('id').where('message_id', '=', photo.id).execute()).toEqual([]);
    expect(await search(person.text)).toEqual([]);
    const list = await ctx.app.inject({ method: 'GET', url: `/v1/contacts?q=${person.phone}`, headers: tenant.headers });
    expect(list.json().data).toEqual([]);
    const all = await ctx.app.inject({ method: 'GET', url: '/v1/contacts', headers: tenant.headers });
    expect(all.json().data.map((c: { id: number }) => c.id)).not.toContain(contactId);
    const audit = await db.selectFrom('audit_log').selectAll().where('action', '=', 'contact.erased').execute();
    expect(audit).toMatchObject([
      { workspace_id: ws, actor_type: 'user', actor_id: admin.user.id, target_type: 'contact', target_id: String(contactId) },
    ]);

    // The same person writing again is a new contact; asking again erases again, harmlessly.
    await deliver({ type: 'text', text: { body: 'back again' } });
    const fresh = await waitFor(
      () => db.selectFrom('contact_handles').select('contact_id').where('external_id', '=', person.phone).executeTakeFirst(),
      'a new contact',
    );
    expect(fresh.contact_id).not.toBe(contactId);
    const again = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contactId}/erase`, headers: admin.headers });
    expect(again.statusCode).toBe(202);
    await waitFor(
      async () =>
        (await db.selectFrom('webhook_events').select('id').where('workspace_id', '=', ws).where('type', '=', 'contact.erased').execute())
          .length === 2,
      'the second run',
    );
    expect(await db.selectFrom('contact_handles').select('contact_id').where('external_id', '=', person.phone).executeTakeFirst()).toEqual(
      fresh,
    );
  });

  it('erases a contact in a workspace whose events hold a lone surrogate a visitor wrote', async () => {
    // The visitor's text is stored with U+FFFD; its message.created body must be too, or the
    // erasure's read of the workspace's event bodies as jsonb fails for every contact.
    const own = await makeTenant(ctx.deps);
    const admin = await signedInUser(ctx.app, ctx.deps, own.workspace.id, ['admin']);
    const widget = await makeWidget(ctx.deps, own.workspace.id);
    const visitor = await startVisitor(ctx.app, widget.key);
    const said = await visitorSays(ctx.app, widget.key, visitor.token, 'half a pair: \ud83d, then more');
    expect(said.statusCode, said.body).toBe(201);
    const created = await db
      .selectFrom('webhook_events')
      .select('body')
      .where('workspace_id', '=', own.workspace.id)
      .where('type', '=', 'message.created')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(created.body).data.text).toBe('half a pair: \ufffd, then more');
    const { contact_id: contactId } = await db
      .selectFrom('threads')
      .select('contact_id')
      .where('id', '=', visitor.threadId)
      .executeTakeFirstOrThrow();
    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contactId}/erase`, headers: admin.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    await waitFor(
      () =>
        db
          .selectFrom('webhook_events')
          .select('id')
          .where('workspace_id', '=', own.workspace.id)
          .where('type', '=', 'contact.erased')
          .executeTakeFirst(),
      'contact.erased',
    );
    const left = await db.selectFrom('webhook_events').select('type').where('workspace_id', '=', own.workspace.id).execute();
    expect(left.map((e) => e.type)).toEqual(['contact.erased']);
  });

  it('answers 404 for another workspace’s contact or none', async () => {
    const other = await makeTenant(ctx.deps);
    const c = await db
      .insertInto('contacts')
      .values({ workspace_id: other.workspace.id, name: 'Elsewhere' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${c.id}/erase`, headers: tenant.headers });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('not_found');
    expect((await db.selectFrom('contacts').select('name').where('id', '=', c.id).executeTakeFirstOrThrow()).name).toBe('Elsewhere');
  });
});
