import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor, visitorSays } from '../helpers/livechat.js';
import { seedThread, signedInUser } from '../helpers/threads.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';
import { inbound } from '../threads/workflow-helpers.js';

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
async function deliver(message: Record<string, unknown>, from = person.phone) {
  const body = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = body.entry[0].changes[0].value;
  value.contacts = [{ profile: { name: person.name }, wa_id: from }];
  const id = `wamid.${randomBytes(12).toString('hex')}`;
  value.messages = [{ from, id, timestamp: String(Math.floor(Date.now() / 1000)), ...message }];
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

  it('clears what a provider said of the person when a reply to them failed (its error names their number)', async () => {
    const phone = `1998${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const admin = await signedInUser(ctx.app, ctx.deps, ws, ['admin']);
    const firstId = await deliver({ type: 'text', text: { body: 'is anyone there' } }, phone);
    const first = await waitFor(() => db.selectFrom('messages').selectAll().where('external_id', '=', firstId).executeTakeFirst(), 'text');
    // Meta names the number it could not reach, as providers and mail servers do.
    fake.behave('/graph/v23.0/106540352242922/messages', {
      status: 400,
      body: { error: { message: `(#131026) Message undeliverable to ${phone}`, type: 'OAuthException', code: 131026 } },
    });
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${first.thread_id}/messages`,
      headers: admin.headers,
      payload: { text: 'We are here' },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    const failed = await waitFor(
      () => db.selectFrom('messages').selectAll().where('id', '=', reply.json().data.id).where('status', '=', 'failed').executeTakeFirst(),
      'the reply failed',
    );
    expect(failed.error).toContain(phone);
    fake.reset();

    const { contact_id } = await db.selectFrom('threads').select('contact_id').where('id', '=', first.thread_id).executeTakeFirstOrThrow();
    const erase = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contact_id}/erase`, headers: admin.headers });
    expect(erase.statusCode, erase.body).toBe(202);
    await waitFor(
      () => db.selectFrom('messages').select('text').where('id', '=', first.id).where('text', '=', '').executeTakeFirst(),
      'the job done',
    );
    const listed = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${first.thread_id}/messages`, headers: admin.headers });
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(phone);
    expect(await findEverywhere([phone])).toEqual([]);
  });

  it('keeps the thread for notes, but a reply to the erased person is a 409 and queues nothing', async () => {
    const connection = await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+4930555010' });
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: ws });
    const agent = await signedInUser(ctx.app, ctx.deps, ws);
    const erase = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${thread.contact_id}/erase`, headers: tenant.headers });
    expect(erase.statusCode).toBe(202);
    const url = `/v1/threads/${thread.id}/messages`;
    for (const headers of [agent.headers, tenant.headers]) {
      const reply = await ctx.app.inject({ method: 'POST', url, headers, payload: { text: 'Are you still there?' } });
      expect(reply.statusCode, reply.body).toBe(409);
      expect(reply.json().error).toEqual({ code: 'conflict', message: "this thread's contact was erased: replies cannot be sent" });
    }
    const note = await ctx.app.inject({
      method: 'POST',
      url,
      headers: agent.headers,
      payload: { text: 'Erased on request', private: true },
    });
    expect(note.statusCode, note.body).toBe(201);
    const outbound = await db
      .selectFrom('messages')
      .select('kind')
      .where('thread_id', '=', thread.id)
      .where('direction', '=', 'outbound')
      .execute();
    expect(outbound).toEqual([{ kind: 'note' }]);
  });

  it('also removes what a contact merged into this one brought: its events, its folded thread’s and their stored answers', async () => {
    const line = await makeConnection(ctx.deps, ws);
    const sms = await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+15550009999' });
    const secret = word('Quillmarrow');
    const keptId = await inbound(ctx, line, '4915100000071', `wamid.kept-${line.id}`, 'hello');
    // Two contacts that are one person: one wrote on the same line (its thread is folded), one by
    // SMS (its thread moves); the second was edited before the merge.
    const foldedId = await inbound(ctx, line, '4915100000072', `wamid.folded-${line.id}`, `folded ${secret}`);
    const movedId = await inbound(ctx, sms, '+4915100000073', `sms.moved-${sms.id}`, `moved ${secret}`);
    const contactOf = async (id: number) =>
      (await db.selectFrom('threads').select('contact_id').where('id', '=', id).executeTakeFirstOrThrow()).contact_id;
    const [keep, folded, moved] = [await contactOf(keptId), await contactOf(foldedId), await contactOf(movedId)];
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/contacts/${moved}`,
      headers: tenant.headers,
      payload: { name: `Name ${secret}`, attributes: { note: secret } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const replyKey = word('key');
    const answer = () =>
      ctx.app.inject({
        method: 'POST',
        url: `/v1/threads/${foldedId}/messages`,
        headers: { ...tenant.headers, 'idempotency-key': replyKey },
        payload: { text: `answer ${secret}` },
      });
    expect((await answer()).statusCode).toBe(202);
    for (const other of [folded, moved]) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/v1/contacts/${keep}/merge`,
        headers: tenant.headers,
        payload: { contactId: other },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const naming = async () =>
      (await db.selectFrom('webhook_events').select(['type', 'body']).where('workspace_id', '=', ws).execute())
        .filter((e) => String(e.body).includes(secret))
        .map((e) => e.type);
    expect(await naming()).toEqual(expect.arrayContaining(['contact.updated', 'message.created', 'thread.created']));

    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${keep}/erase`, headers: tenant.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    await waitFor(
      async () =>
        (
          await db.selectFrom('webhook_events').select('body').where('workspace_id', '=', ws).where('type', '=', 'contact.erased').execute()
        ).find((e) => JSON.parse(e.body).data.contactId === keep),
      'contact.erased',
    );
    expect(await naming()).toEqual([]);
    const log = await ctx.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: tenant.headers });
    expect(log.statusCode).toBe(200);
    expect(log.body).not.toContain(secret);
    // The stored answer of the reply in the folded thread is gone: asking again finds no thread.
    const again = await answer();
    expect(again.statusCode).toBe(404);
    expect(again.body).not.toContain(secret);
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
  it('takes from the event log what came of the contacts merged into it, their folded threads included', async () => {
    const t = await makeTenant(ctx.deps);
    const [one, two] = [await makeConnection(ctx.deps, t.workspace.id), await makeConnection(ctx.deps, t.workspace.id)];
    const digits = String(Math.floor(Math.random() * 1e6)).padStart(6, '0');
    const [keptPhone, mergedPhone] = [`1777${digits}01`, `1777${digits}02`];
    const words = { kept: word('Brindlequay'), folded: word('Snorvelty'), moved: word('Quintarrow'), reply: word('Harrowdune') };
    const keep = await inbound(ctx, one, keptPhone, word('wamid.keep'), words.kept);
    // The merged contact's thread on the same connection folds into the kept one; on another, it moves.
    const folded = await inbound(ctx, one, mergedPhone, word('wamid.fold'), words.folded);
    await inbound(ctx, two, mergedPhone, word('wamid.move'), words.moved);
    const contactOf = async (threadId: number) =>
      (await db.selectFrom('threads').select('contact_id').where('id', '=', threadId).executeTakeFirstOrThrow()).contact_id;
    const [contactId, mergedId] = [await contactOf(keep), await contactOf(folded)];
    // A reply on the thread that folds away, with an Idempotency-Key: its stored answer names that thread.
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${folded}/messages`,
      headers: { ...t.headers, 'idempotency-key': word('fold-reply') },
      payload: { text: words.reply },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    const merged = await ctx.app.inject({
      method: 'POST',
      url: `/v1/contacts/${contactId}/merge`,
      headers: t.headers,
      payload: { contactId: mergedId },
    });
    expect(merged.statusCode, merged.body).toBe(200);
    const erased = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${contactId}/erase`, headers: t.headers });
    expect(erased.statusCode, erased.body).toBe(202);
    // The log shows an event once no older transaction runs anywhere in the cluster (another
    // test file's included), so the wait reads the log itself, not the table under it.
    const log = await waitFor(async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: t.headers });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data as { type: string }[];
      return data.some((e) => e.type === 'contact.erased') && data;
    }, 'contact.erased in the event log');
    expect(log).toMatchObject([{ type: 'contact.erased', data: { contactId } }]);
    expect(await findEverywhere([mergedPhone, keptPhone, ...Object.values(words)])).toEqual([]);
  });
});
