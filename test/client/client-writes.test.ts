import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InboxClientError, operatorClient, tenantClient } from 'inbox/client';
import { ADMIN_KEY, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';

/** Every write of the typed client, against the real app over real HTTP. */
const ctx = await useTestContext();
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

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as InboxClientError);

async function thread() {
  const contact = await ctx.deps.db.insertInto('contacts').values({ workspace_id: tenant.workspace.id, name: 'Ada' }).returning('id').executeTakeFirstOrThrow();
  return ctx.deps.db
    .insertInto('threads')
    .values({ workspace_id: tenant.workspace.id, connection_id: whatsapp.id, contact_id: contact.id, last_message_preview: 'hi' })
    .returning('id')
    .executeTakeFirstOrThrow();
}

async function inboxRow(status: 'dead_letter' | 'failed') {
  const id = randomUUID();
  await ctx.deps.db
    .insertInto('webhook_inbox')
    .values({ id, integration_key: 'whatsapp', app_id: tenant.workspace.appId, raw_body: '{"x":1}', payload_json: '{"x":1}', event: null, status, last_error: 'no connection', attempt_count: 8 })
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

  it('updates a connection: name and write-only credentials', async () => {
    const renamed = await inbox.updateConnection(whatsapp.id, { name: 'Support line', credentials: { accessToken: 'EAAG-token' } });
    expect(renamed).toMatchObject({ id: whatsapp.id, name: 'Support line', hasCredentials: true });
    expect(renamed).not.toHaveProperty('credentials');
    expect((await inbox.updateConnection(whatsapp.id, { credentials: null })).hasCredentials).toBe(false);
    expect((await collect(inbox.connections())).find((c) => c.id === whatsapp.id)?.name).toBe('Support line');
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
    const created = await inbox.createWebhookEndpoint({ url: 'https://hooks.example.com/in', events: ['message.created'], description: 'CRM' });
    expect(created.secret).toMatch(/^whsec_/);
    expect(await inbox.webhookEndpoint(created.id)).toMatchObject({ id: created.id, description: 'CRM', enabled: true });
    expect(await inbox.updateWebhookEndpoint(created.id, { description: 'CRM 2', signatureScheme: 'standard' })).toMatchObject({ description: 'CRM 2', signatureScheme: 'standard' });
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
