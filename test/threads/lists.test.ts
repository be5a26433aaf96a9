import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MALFORMED_CURSOR_MESSAGE } from '../../src/http/errors.js';
import { processDeliveries } from '../../src/webhooks-in/process-deliveries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture } from '../helpers/webhooks.js';

const SECRET = 'lists-secret';
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) } });
const tenant = await makeTenant(ctx.deps);
const other = await makeTenant(ctx.deps);
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

/** 33 messages from 30 senders: senders 0, 1 and 2 write twice (messages i and i + 30). */
const ids: string[] = [];
for (let i = 0; i < 33; i++) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  const from = `4477009000${String(i % 30).padStart(2, '0')}`;
  value.contacts[0] = { profile: { name: `Sender ${i % 30}` }, wa_id: from };
  value.messages[0] = {
    ...value.messages[0],
    from,
    id: `wamid.list-${i}`,
    timestamp: String(1763000000 + i),
    text: { body: `message ${i}` },
  };
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
}
ids.push(...(await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id));
await processDeliveries(ctx.deps, ids);

async function walk(url: string, headers: Record<string, string>, limit: number) {
  const items: { id: number }[] = [];
  let cursor: string | undefined;
  do {
    const res = await ctx.app.inject({ method: 'GET', url: `${url}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, headers });
    expect(res.statusCode, res.body).toBe(200);
    items.push(...res.json().data);
    cursor = res.json().meta.nextCursor;
  } while (cursor);
  return items;
}

describe('tenant lists (cursor pages)', () => {
  it('GET /v1/threads: most recently active first, every thread once, default 25', async () => {
    const first = (await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: tenant.headers })).json();
    expect(first.data).toHaveLength(25);
    expect(first.meta.nextCursor).toEqual(expect.any(String));
    expect(first.data[0]).toEqual({
      id: expect.any(Number),
      connectionId: expect.any(Number),
      integrationKey: 'whatsapp',
      contactId: expect.any(Number),
      contactName: 'Sender 2',
      status: 'open',
      snoozedUntil: null,
      priority: 'normal',
      sla: null,
      teamId: null,
      assigneeId: null,
      labels: [],
      unreadCount: 2,
      agentLastSeenAt: null,
      lastMessageAt: new Date(1763000032 * 1000).toISOString(),
      lastMessagePreview: 'message 32',
      // WhatsApp Cloud: the contact's last message (the provider's timestamp) + 24 h.
      replyWindowEndsAt: new Date((1763000032 + 24 * 3600) * 1000).toISOString(),
      createdAt: expect.any(String),
    });
    const all = await walk('/v1/threads', tenant.headers, 7);
    expect(all).toHaveLength(30);
    expect(new Set(all.map((t) => t.id)).size).toBe(30);
  });

  it('GET /v1/threads/:id/messages: a thread’s messages, newest first; another workspace’s thread is not found', async () => {
    const threads = await walk('/v1/threads', tenant.headers, 100);
    const busiest = threads[0]!;
    const messages = await walk(`/v1/threads/${busiest.id}/messages`, tenant.headers, 1);
    expect(messages.map((m) => (m as unknown as { text: string }).text)).toEqual(['message 32', 'message 2']);
    expect(messages[0]).toMatchObject({
      direction: 'inbound',
      status: 'received',
      externalId: 'wamid.list-32',
      threadId: busiest.id,
      error: null,
    });
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${busiest.id}/messages`, headers: other.headers });
    expect(res.statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/threads/${busiest.id}`, headers: other.headers })).statusCode).toBe(404);
  });

  it('GET /v1/contacts: contacts with their handles', async () => {
    const contacts = await walk('/v1/contacts', tenant.headers, 100);
    expect(contacts).toHaveLength(30);
    expect(contacts).toContainEqual({
      id: expect.any(Number),
      name: 'Sender 3',
      handles: [{ integrationKey: 'whatsapp', externalId: '447700900003' }],
      email: null,
      phone: null,
      attributes: {},
      createdAt: expect.any(String),
    });
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/contacts', headers: other.headers })).json().data).toEqual([]);
  });

  it('clamps limit to 100 and rejects a malformed cursor with 422', async () => {
    await sql`SELECT 1`.execute(ctx.deps.db);
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/contacts?limit=500', headers: tenant.headers });
    expect(res.json().data).toHaveLength(30);
    const bad = await ctx.app.inject({ method: 'GET', url: '/v1/threads?cursor=bm9wZQ', headers: tenant.headers });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error).toEqual({ code: 'validation_failed', message: MALFORMED_CURSOR_MESSAGE });
  });
});
