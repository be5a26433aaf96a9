import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { type InboxClientError, operatorClient, tenantClient } from '../../packages/client/src/index.js';
import { SYNC_TEMPLATES_QUEUE, type SyncTemplatesJob, syncTemplates } from '../../src/connections/sync-templates.queue.js';
import { ADMIN_KEY, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { makeWidget, startVisitor, visitorSays } from '../helpers/livechat.js';
import { seedMessage, seedThread } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

/** Every write of the typed client, against the real app over real HTTP. */
const fake = await startFakeProviders();
afterAll(() => fake.close());
// Template sync reads the fake Graph API, its job run here by hand; nothing else reaches a
// provider (no workers).
const ctx = await useTestContext({
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: 'client-writes-secret', apiBaseUrl: fake.baseUrls.whatsapp, accessToken: 'EAAG-client-writes' },
    }),
  },
});
const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps);
const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp' });
const inbox = tenantClient({ baseUrl, apiKey: tenant.apiKey });

async function collect<T>(items: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A word no other test writes: letters only, so the search parser keeps it one word. */
const word = () =>
  Array.from(randomUUID().replace(/-/g, '').slice(0, 10), (c) => String.fromCharCode(97 + (Number.parseInt(c, 16) % 26))).join('');

/** The admin user, signed in through the client: what a person (not an API key) sees. */
async function signedIn() {
  const user = tenantClient({ baseUrl });
  await user.login({ email: admin.user.email, password: admin.password, remember: false });
  return user;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as InboxClientError,
  );

async function thread() {
  const contact = await ctx.deps.db
    .insertInto('contacts')
    .values({ workspace_id: tenant.workspace.id, name: 'Ada' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return (
    ctx.deps.db
      .insertInto('threads')
      // The contact wrote just now: WhatsApp's reply window is open.
      .values({
        workspace_id: tenant.workspace.id,
        connection_id: whatsapp.id,
        contact_id: contact.id,
        last_message_preview: 'hi',
        last_inbound_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow()
  );
}

async function inboxRow(status: 'dead_letter' | 'failed') {
  const id = randomUUID();
  await ctx.deps.db
    .insertInto('webhook_inbox')
    .values({
      id,
      integration_key: 'whatsapp',
      app_id: tenant.workspace.appId,
      raw_body: '{"x":1}',
      payload_json: '{"x":1}',
      event: null,
      status,
      last_error: 'no connection',
      attempt_count: 8,
    })
    .execute();
  return id;
}

describe('tenant client: writes', () => {
  it('logs in, keeps the token, exchanges an auth code, refreshes and logs out', async () => {
    const user = tenantClient({ baseUrl });
    const login = await user.login({ email: admin.user.email, password: admin.password, remember: false });
    expect(user.token).toBe(login.access_token);
    expect(await user.me()).toMatchObject({ id: admin.user.id, email: admin.user.email });
    const code = await user.generateCode();
    expect(code.expires_in).toBeGreaterThan(0);
    const exchanged = await tenantClient({ baseUrl }).generateToken(code.auth_code);
    expect(exchanged.data.id).toBe(admin.user.id);
    const before = user.token!;
    const refreshed = await user.refresh();
    expect(user.token).toBe(refreshed.access_token);
    expect(await failure(tenantClient({ baseUrl, token: before }).me())).toMatchObject({ status: 401 });
    await user.logout();
    expect(user.token).toBeUndefined();
    expect(await failure(tenantClient({ baseUrl, token: refreshed.access_token }).me())).toMatchObject({ status: 401 });
  });

  it('replies with an Idempotency-Key: a retry answers the same message', async () => {
    const { id } = await thread();
    const first = await inbox.reply(id, { text: 'hello' }, { idempotencyKey: 'reply-1' });
    expect(first).toMatchObject({ threadId: id, direction: 'outbound', status: 'queued', text: 'hello' });
    const again = await inbox.reply(id, { text: 'hello' }, { idempotencyKey: 'reply-1' });
    expect(again.id).toBe(first.id);
    expect((await collect(inbox.messages(id))).map((m) => m.id)).toEqual([first.id]);
    expect(await inbox.thread(id)).toMatchObject({ id, connectionId: whatsapp.id });
    // An undeclared field, forced past the types, is refused by the service.
    const refused = await failure(inbox.reply(id, { text: 'x', internal: true } as unknown as { text: string }));
    expect(refused).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(refused!.message).toContain('internal');
  });

  it('lists threads by status, assignee, connection, contact and label, page after page', async () => {
    const line = { ...(await makeConnection(ctx.deps, tenant.workspace.id)), workspaceId: tenant.workspace.id };
    const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 12, minutes));
    const open = await seedThread(ctx.deps, line, { assigneeId: admin.user.id, labels: ['vip'], lastMessageAt: at(4) });
    const pending = await seedThread(ctx.deps, line, { status: 'pending', labels: ['vip', 'billing'], lastMessageAt: at(3) });
    const resolved = await seedThread(ctx.deps, line, { status: 'resolved', assigneeId: admin.user.id, lastMessageAt: at(2) });
    const snoozed = await seedThread(ctx.deps, line, { status: 'snoozed', lastMessageAt: at(1) });
    const ids = async (filters: Parameters<typeof inbox.threads>[0], client = inbox) =>
      (await collect(client.threads({ connectionId: line.id, limit: 1, ...filters }))).map((t) => t.id);

    expect(await ids({})).toEqual([open.id, pending.id, resolved.id, snoozed.id]);
    expect(await ids({ status: 'resolved' })).toEqual([resolved.id]);
    expect(await ids({ status: ['open', 'pending'] })).toEqual([open.id, pending.id]);
    expect(await ids({ assigneeId: admin.user.id })).toEqual([open.id, resolved.id]);
    expect(await ids({ assigneeId: 'none' })).toEqual([pending.id, snoozed.id]);
    expect(await ids({ label: 'VIP' })).toEqual([open.id, pending.id]);
    expect(await ids({ label: 'billing', status: 'pending' })).toEqual([pending.id]);
    expect(await ids({ contactId: resolved.contact_id })).toEqual([resolved.id]);
    // `me` is the signed-in user; an API key has none.
    expect(await ids({ assigneeId: 'me' }, await signedIn())).toEqual([open.id, resolved.id]);
    expect(await failure(ids({ assigneeId: 'me' }))).toMatchObject({ code: 'validation_failed', status: 422 });

    const [listed] = await collect(inbox.threads({ connectionId: line.id, status: 'snoozed' }));
    expect(listed).toMatchObject({
      id: snoozed.id,
      status: 'snoozed',
      assigneeId: null,
      labels: [],
      unreadCount: 0,
      agentLastSeenAt: null,
    });
    expect(listed!.snoozedUntil).toBe(snoozed.snoozed_until!.toISOString());
  });

  it('works a thread: status, snooze, assignee and labels, then marks it read', async () => {
    const line = { ...(await makeConnection(ctx.deps, tenant.workspace.id)), workspaceId: tenant.workspace.id };
    const { id } = await seedThread(ctx.deps, line);
    const taken = await inbox.updateThread(id, { status: 'pending', assigneeId: admin.user.id, labels: ['Billing', 'vip', 'billing'] });
    expect(taken).toMatchObject({ id, status: 'pending', assigneeId: admin.user.id, labels: ['billing', 'vip'], snoozedUntil: null });
    const until = new Date(Date.now() + 86_400_000).toISOString();
    expect(await inbox.updateThread(id, { status: 'snoozed', snoozedUntil: until, assigneeId: null })).toMatchObject({
      status: 'snoozed',
      snoozedUntil: until,
      assigneeId: null,
    });
    expect(await failure(inbox.updateThread(id, { status: 'snoozed', snoozedUntil: null }))).toMatchObject({
      code: 'validation_failed',
      status: 422,
    });
    expect(await failure(inbox.updateThread(id, {}))).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(await failure(inbox.updateThread(2_147_483_000, { status: 'open' }))).toMatchObject({ code: 'not_found', status: 404 });
    // Each change left an activity line in the transcript, written by the service for an API key.
    const lines = (await collect(inbox.messages(id))).filter((m) => m.kind === 'activity');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.every((m) => m.private && m.authorId === null)).toBe(true);

    await ctx.deps.db.updateTable('threads').set({ unread_count: 3 }).where('id', '=', id).execute();
    expect((await inbox.thread(id)).unreadCount).toBe(3);
    const read = await inbox.markThreadRead(id);
    expect(read).toMatchObject({ id, unreadCount: 0 });
    expect(read.agentLastSeenAt).not.toBeNull();
    expect(await inbox.thread(id)).toMatchObject({ unreadCount: 0, agentLastSeenAt: read.agentLastSeenAt });
  });

  it('writes a private note (201) and queues a reply (202), the key in the body or in opts', async () => {
    const { id } = await thread();
    const user = await signedIn();
    const note = await user.reply(id, { text: 'VIP, be quick', private: true });
    expect(note).toMatchObject({ threadId: id, kind: 'note', private: true, authorId: admin.user.id, externalId: null });
    // The key travels as a header: the body the service refuses unknown fields in never holds it.
    const sent = await user.reply(id, { text: 'On its way', idempotencyKey: 'reply-body-1' });
    expect(sent).toMatchObject({ threadId: id, kind: 'message', private: false, status: 'queued', authorId: admin.user.id });
    expect((await user.reply(id, { text: 'On its way', idempotencyKey: 'reply-body-1' })).id).toBe(sent.id);
    expect((await user.reply(id, { text: 'On its way' }, { idempotencyKey: 'reply-body-1' })).id).toBe(sent.id);
    const transcript = await collect(inbox.messages(id));
    expect(transcript.filter((m) => m.kind !== 'activity').map((m) => m.id)).toEqual(expect.arrayContaining([note.id, sent.id]));
    expect(transcript.filter((m) => m.text === 'On its way')).toHaveLength(1);
  });

  it('searches messages page after page; API keys never find private notes', async () => {
    const tag = word();
    const line = { ...(await makeConnection(ctx.deps, tenant.workspace.id)), workspaceId: tenant.workspace.id };
    const t = await seedThread(ctx.deps, line);
    const older = await seedMessage(ctx.deps, t, `where is order ${tag}`, { createdAt: new Date(Date.UTC(2026, 0, 1, 10)) });
    const newer = await seedMessage(ctx.deps, t, `${tag} arrived late`, { createdAt: new Date(Date.UTC(2026, 0, 1, 11)) });
    const note = await seedMessage(ctx.deps, t, `escalate ${tag}`, { kind: 'note', createdAt: new Date(Date.UTC(2026, 0, 1, 12)) });
    const hits = await collect(inbox.searchMessages({ q: tag, limit: 1 }));
    expect(hits.map((m) => m.id)).toEqual([newer.id, older.id]);
    expect(hits[0]).toMatchObject({ threadId: t.id, kind: 'message', private: false });
    expect((await collect((await signedIn()).searchMessages({ q: tag }))).map((m) => m.id)).toEqual([note.id, newer.id, older.id]);
    expect((await collect(inbox.searchMessages({ q: `"${tag} arrived"` }))).map((m) => m.id)).toEqual([newer.id]);
    expect(await failure(collect(inbox.searchMessages({ q: `-${tag}` })))).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(await failure(collect(inbox.searchMessages({ q: '' })))).toMatchObject({ code: 'validation_failed', status: 422 });
  });

  it('lists the labels on threads with how many open threads carry each', async () => {
    const [a, b, c] = [word(), word(), word()];
    const line = { ...(await makeConnection(ctx.deps, tenant.workspace.id)), workspaceId: tenant.workspace.id };
    await seedThread(ctx.deps, line, { labels: [a, b] });
    await seedThread(ctx.deps, line, { labels: [a], status: 'pending' });
    await seedThread(ctx.deps, line, { labels: [a, c], status: 'resolved' });
    const labels = (await inbox.labels()).filter((l) => [a, b, c].includes(l.name));
    expect(labels.sort((x, y) => x.name.localeCompare(y.name))).toEqual(
      [
        { name: a, openThreads: 1 },
        { name: b, openThreads: 1 },
        { name: c, openThreads: 0 },
      ].sort((x, y) => x.name.localeCompare(y.name)),
    );
  });

  it('turns automatic assignment of a connection on and off', async () => {
    const line = await makeConnection(ctx.deps, tenant.workspace.id);
    expect(line.autoAssign).toBe(false);
    expect(await inbox.updateConnection(line.id, { autoAssign: true })).toMatchObject({ id: line.id, autoAssign: true });
    expect((await collect(inbox.connections())).find((c) => c.id === line.id)?.autoAssign).toBe(true);
    expect((await inbox.updateConnection(line.id, { autoAssign: false, name: 'Manual line' })).autoAssign).toBe(false);
    const refused = await failure(inbox.updateConnection(line.id, { autoAssign: 'yes' } as unknown as { autoAssign: boolean }));
    expect(refused).toMatchObject({ code: 'validation_failed', status: 422 });
  });

  it('syncs and lists WhatsApp templates, then queues a template reply', async () => {
    const line = await makeConnection(ctx.deps, tenant.workspace.id, { externalAccountId: '106540352242999' });
    expect((await inbox.updateConnection(line.id, { businessAccountId: '4400' })).businessAccountId).toBe('4400');
    expect((await inbox.syncTemplates(line.id)).templatesSync?.status).toBe('running');
    // The sync is a job that runs after the 202; with no workers here, it is run by hand.
    const [job] = await ctx.deps.boss.fetch<SyncTemplatesJob>(SYNC_TEMPLATES_QUEUE);
    await syncTemplates(ctx.deps, job!.data);
    const templates = await waitFor(async () => {
      const list = await inbox.templates(line.id);
      return list.length === 3 ? list : undefined;
    }, 'the synced templates');
    expect(templates.map((t) => t.name).sort()).toEqual(['order_update', 'spring_sale', 'welcome']);
    expect((await collect(inbox.connections())).find((c) => c.id === line.id)?.templatesSync?.status).toBe('succeeded');

    const contact = await ctx.deps.db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Bo' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const t = await ctx.deps.db
      .insertInto('threads')
      .values({ workspace_id: tenant.workspace.id, connection_id: line.id, contact_id: contact.id, last_message_preview: '' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const queued = await inbox.reply(t.id, {
      template: { name: 'order_update', language: 'en_US', parameters: { header: ['#7'], body: ['Bo', '#7'] } },
    });
    expect(queued).toMatchObject({ status: 'queued', text: 'Hi Bo, your order #7 has shipped.' });
    const refused = await failure(inbox.reply(t.id, { template: { name: 'spring_sale', language: 'en_US', parameters: { body: ['x'] } } }));
    expect(refused).toMatchObject({ code: 'validation_failed', status: 422 });
  });

  it('starts a conversation: the thread and the queued message; a retry with its key answers the same', async () => {
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'sms',
      externalAccountId: '+14155550100',
      credentials: { accountSid: 'AC0123456789abcdef0123456789abcdef', accessToken: 'sms-token' },
    });
    const body = { connectionId: sms.id, to: '+1 415 555 0160', name: 'Cy', text: 'Your order is ready.' };
    const started = await inbox.conversations.start({ ...body, idempotencyKey: 'client-start-1' });
    expect(started.thread).toMatchObject({ connectionId: sms.id, integrationKey: 'sms' });
    expect(started.message).toMatchObject({ threadId: started.thread.id, status: 'queued', text: 'Your order is ready.' });
    expect(await inbox.conversations.start(body, { idempotencyKey: 'client-start-1' })).toEqual(started);
    expect((await inbox.contact(started.thread.contactId)).handles).toEqual([{ integrationKey: 'sms', externalId: '+14155550160' }]);
    const refused = await failure(inbox.conversations.start({ ...body, to: 'not a number' }));
    expect(refused).toMatchObject({ code: 'validation_failed', status: 422 });
  });

  it('updates a connection: name and write-only credentials', async () => {
    const renamed = await inbox.updateConnection(whatsapp.id, { name: 'Support line', credentials: { accessToken: 'EAAG-token' } });
    expect(renamed).toMatchObject({ id: whatsapp.id, name: 'Support line', hasCredentials: true });
    expect(renamed).not.toHaveProperty('credentials');
    expect((await inbox.updateConnection(whatsapp.id, { credentials: null })).hasCredentials).toBe(false);
    expect((await collect(inbox.connections())).find((c) => c.id === whatsapp.id)?.name).toBe('Support line');
  });

  it('creates a connection with write-only credentials', async () => {
    const made = await inbox.createConnection({
      integrationKey: 'whatsapp',
      externalAccountId: `acct-${Date.now()}`,
      name: 'Second line',
      credentials: { accessToken: 'EAAG-created' },
    });
    expect(made).toMatchObject({ integrationKey: 'whatsapp', name: 'Second line', hasCredentials: true });
    expect(made).not.toHaveProperty('credentials');
    expect((await collect(inbox.connections())).map((c) => c.id)).toContain(made.id);
  });

  it('creates, lists, rotates and revokes API keys', async () => {
    const created = await inbox.createApiKey({ name: 'ci', scopes: ['read'] });
    expect(created.key).toMatch(/^inbox_ak_/);
    expect((await collect(inbox.apiKeys())).map((k) => k.id)).toContain(created.id);
    const rotated = await inbox.rotateApiKey(created.id);
    expect(rotated.key).not.toBe(created.key);
    expect(await failure(collect(tenantClient({ baseUrl, apiKey: created.key }).threads()))).toMatchObject({ status: 401 });
    await collect(tenantClient({ baseUrl, apiKey: rotated.key }).threads());
    await inbox.revokeApiKey(created.id);
    expect(await failure(collect(tenantClient({ baseUrl, apiKey: rotated.key }).threads()))).toMatchObject({ status: 401 });
  });

  it('manages a webhook endpoint: create, get, patch, rotate, test, deliveries, redeliver, delete', async () => {
    const created = await inbox.createWebhookEndpoint({
      url: 'https://hooks.example.com/in',
      events: ['message.created'],
      description: 'CRM',
    });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await inbox.webhookEndpoint(created.id)).toMatchObject({ id: created.id, description: 'CRM', enabled: true });
    expect(await inbox.updateWebhookEndpoint(created.id, { description: 'CRM 2', signatureScheme: 'standard' })).toMatchObject({
      description: 'CRM 2',
      signatureScheme: 'standard',
    });
    const rotated = await inbox.rotateWebhookSecret(created.id, { graceSeconds: 0 });
    expect(rotated.secret).not.toBe(created.secret);
    const ping = await inbox.testWebhookEndpoint(created.id);
    expect(ping).toMatchObject({ endpointId: created.id, eventType: 'ping', status: 'pending' });
    expect((await collect(inbox.webhookDeliveries(created.id, { status: 'pending' }))).map((d) => d.id)).toEqual([ping.id]);
    expect(await inbox.redeliver(ping.id)).toMatchObject({ id: ping.id, status: 'pending' });
    await inbox.deleteWebhookEndpoint(created.id);
    expect(await failure(inbox.webhookEndpoint(created.id))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('lists, reads and requeues dead letters', async () => {
    const dead = await inboxRow('dead_letter');
    expect((await inbox.deadLetters()).map((r) => r.id)).toContain(dead);
    expect(await inbox.deadLetter(dead)).toMatchObject({ id: dead, rawBody: '{"x":1}', payloadJson: { x: 1 } });
    expect(await inbox.requeueDeadLetter(dead, { idempotencyKey: 'requeue-1' })).toEqual({ id: dead, status: 'dead_letter' });
    expect((await inbox.deadLetter(dead)).attemptCount).toBe(0);
    expect(await failure(inbox.requeueDeadLetter(randomUUID()))).toMatchObject({ code: 'not_found' });
  });

  it('searches contacts across pages, reads, edits and merges them', async () => {
    const tag = randomUUID().slice(0, 8);
    const insert = (name: string, email: string | null = null) =>
      ctx.deps.db
        .insertInto('contacts')
        .values({ workspace_id: tenant.workspace.id, name, email })
        .returning('id')
        .executeTakeFirstOrThrow();
    const keep = await insert(`Ada ${tag}`);
    const dup = await insert(`ada ${tag.toUpperCase()}`, `ada-${tag}@example.com`);
    await insert(`Grace ${randomUUID().slice(0, 8)}`);
    // One contact a page: the iterator follows the cursor to the second match.
    const found = await collect(inbox.contacts({ q: tag, limit: 1 }));
    expect(found.map((c) => c.id).sort((a, b) => a - b)).toEqual([keep.id, dup.id].sort((a, b) => a - b));
    expect(await inbox.contact(keep.id)).toMatchObject({ id: keep.id, name: `Ada ${tag}`, email: null });
    const edited = await inbox.updateContact(keep.id, { phone: '+44 20 7946 0000', attributes: { plan: 'pro', seats: 3 } });
    expect(edited).toMatchObject({ id: keep.id, phone: '+44 20 7946 0000', attributes: { plan: 'pro', seats: 3 } });
    expect(
      await failure(inbox.updateContact(keep.id, { attributes: { nested: {} } } as unknown as { attributes: Record<string, string> })),
    ).toMatchObject({
      code: 'validation_failed',
      status: 422,
    });
    const merged = await inbox.mergeContact(keep.id, { contactId: dup.id });
    expect(merged).toMatchObject({ id: keep.id, email: `ada-${tag}@example.com`, phone: '+44 20 7946 0000' });
    expect(await failure(inbox.contact(dup.id))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await failure(inbox.mergeContact(keep.id, { contactId: keep.id }))).toMatchObject({ code: 'validation_failed', status: 422 });
    expect((await collect(inbox.contacts({ q: tag }))).map((c) => c.id)).toEqual([keep.id]);
  });

  it('creates, lists, changes and deletes canned responses', async () => {
    const greet = await inbox.createCannedResponse({ shortCode: 'greet', content: 'Hello! How can I help?' });
    expect(greet).toMatchObject({ shortCode: 'greet', content: 'Hello! How can I help?' });
    const bye = await inbox.createCannedResponse({ shortCode: 'bye', content: 'Goodbye.' });
    expect((await collect(inbox.cannedResponses({ limit: 1 }))).map((c) => c.id)).toEqual([bye.id, greet.id]);
    expect(await inbox.updateCannedResponse(greet.id, { content: 'Hi there!' })).toMatchObject({
      id: greet.id,
      shortCode: 'greet',
      content: 'Hi there!',
    });
    expect(await failure(inbox.updateCannedResponse(bye.id, { shortCode: 'greet' }))).toMatchObject({ code: 'conflict', status: 409 });
    expect(await failure(inbox.createCannedResponse({ shortCode: 'Not Valid', content: 'x' }))).toMatchObject({
      code: 'validation_failed',
      status: 422,
    });
    await inbox.deleteCannedResponse(bye.id);
    expect((await collect(inbox.cannedResponses())).map((c) => c.id)).toEqual([greet.id]);
    expect(await failure(inbox.deleteCannedResponse(bye.id))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('adds a user to the team, lists the team, changes and deactivates the user', async () => {
    const email = `agent-${randomUUID().slice(0, 8)}@example.com`;
    const agent = await inbox.createUser({ name: 'Agent', email, password: 'correct horse', roles: ['agent'] });
    expect(agent).toMatchObject({ name: 'Agent', email, roles: ['agent'], active: true });
    expect(agent).not.toHaveProperty('password');
    const team = await collect(inbox.users({ limit: 1 }));
    expect(team.map((u) => u.id)).toEqual(expect.arrayContaining([agent.id, admin.user.id]));
    const session = tenantClient({ baseUrl });
    await session.login({ email, password: 'correct horse', remember: false });
    expect(await inbox.updateUser(agent.id, { name: 'Agent Smith', roles: ['agent', 'admin'] })).toMatchObject({
      name: 'Agent Smith',
      roles: ['agent', 'admin'],
    });
    // Only the platform operator makes operators.
    expect(await failure(inbox.updateUser(agent.id, { roles: ['operator'] }))).toMatchObject({ code: 'validation_failed', status: 422 });
    expect(await inbox.updateUser(agent.id, { active: false })).toMatchObject({ id: agent.id, active: false });
    // Deactivating ended the session it held and refuses a new one.
    expect(await failure(session.me())).toMatchObject({ status: 401 });
    expect(await failure(tenantClient({ baseUrl }).login({ email, password: 'correct horse', remember: false }))).toMatchObject({
      status: 401,
    });
    // Only an admin adds users.
    const reader = await inbox.createApiKey({ name: 'reader', scopes: ['read'] });
    const readOnly = tenantClient({ baseUrl, apiKey: reader.key });
    expect((await collect(readOnly.users())).map((u) => u.id)).toContain(agent.id);
    expect(await failure(readOnly.createUser({ name: 'X', email: `x-${email}`, password: 'correct horse' }))).toMatchObject({
      status: 403,
    });
  });

  it("blocks a live chat thread's visitor; a thread of another channel is 422", async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const visitor = await startVisitor(ctx.app, widget.key);
    expect(await inbox.blockVisitor(visitor.threadId)).toEqual({ threadId: visitor.threadId, visitorsBlocked: 1 });
    expect((await visitorSays(ctx.app, widget.key, visitor.token, 'still there?')).statusCode).toBe(401);
    expect(await inbox.blockVisitor(visitor.threadId)).toEqual({ threadId: visitor.threadId, visitorsBlocked: 0 });
    const { id } = await thread();
    expect(await failure(inbox.blockVisitor(id))).toMatchObject({ code: 'validation_failed', status: 422 });
  });

  it("creates, lists and revokes a user's personal-access tokens", async () => {
    const user = tenantClient({ baseUrl });
    await user.login({ email: admin.user.email, password: admin.password, remember: false });
    const pat = await user.createPersonalAccessToken({ name: 'socket', expiresInDays: 7 });
    expect(pat.token).toBeTruthy();
    expect((await collect(user.personalAccessTokens())).map((t) => t.id)).toEqual([pat.id]);
    expect(await tenantClient({ baseUrl, token: pat.token }).me()).toMatchObject({ id: admin.user.id });
    await user.revokePersonalAccessToken(pat.id);
    expect(await failure(tenantClient({ baseUrl, token: pat.token }).me())).toMatchObject({ status: 401 });
  });
});

describe('operator client: writes', () => {
  it('reads any delivery with its body and requeues it', async () => {
    const ops = operatorClient({ baseUrl, adminKey: ADMIN_KEY });
    const failed = await inboxRow('failed');
    expect(await ops.webhookInboxRow(failed)).toMatchObject({ id: failed, rawBody: '{"x":1}' });
    expect(await ops.requeue(failed)).toEqual({ id: failed, status: 'failed' });
    expect((await collect(ops.webhookInbox({ status: 'received', limit: 1 }))).map((r) => r.id)).toContain(failed);
  });
});
