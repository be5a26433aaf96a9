import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { InboxClientError, operatorClient, tenantClient } from '../../packages/client/src/index.js';
import { processDeliveries } from '../../src/webhooks-in/process-deliveries.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { ADMIN_KEY, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const SECRET = 'client-secret';
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) } });
const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps);
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });
for (let i = 0; i < 7; i++) await createWorkspace(ctx.deps.db, `Client tenant ${i}`);

// Twelve messages from one sender: one thread with a twelve-message transcript.
for (let i = 0; i < 12; i++) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  payload.entry[0].changes[0].value.messages[0].id = `wamid.client-${i}`;
  payload.entry[0].changes[0].value.messages[0].timestamp = String(1763000000 + i);
  await deliverSigned(ctx, 'whatsapp', payload);
}
await processDeliveries(
  ctx.deps,
  (await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id),
);

/** A stand-in upstream that answers every list without `meta` (a broken proxy). */
const bare: Server = createServer((_req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ data: [{ id: 1 }] }));
});
await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((r) => bare.close(() => r())));

async function collect<T>(items: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('tenant client (cursor pages)', () => {
  it('follows nextCursor to the end, whatever the page size', async () => {
    const client = tenantClient({ baseUrl, apiKey: tenant.apiKey });
    const [thread] = await collect(client.all<{ id: number }>('/v1/threads'));
    const messages = await collect(client.all<{ externalId: string }>(`/v1/threads/${thread!.id}/messages`, { limit: 5 }));
    expect(messages.map((m) => m.externalId)).toEqual(Array.from({ length: 12 }, (_, i) => `wamid.client-${11 - i}`));
  });

  it('walks webhook endpoints and a delivery log with typed iterators', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        headers: tenant.headers,
        payload: { url: `https://hooks${i}.example.com/` },
      });
      if (i === 0)
        for (let t = 0; t < 3; t++)
          await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${res.json().data.id}/test`, headers: tenant.headers });
    }
    const client = tenantClient({ baseUrl, apiKey: tenant.apiKey });
    const endpoints = await collect(client.webhookEndpoints({ limit: 2 }));
    expect(endpoints.map((e) => e.url)).toEqual([
      'https://hooks2.example.com/',
      'https://hooks1.example.com/',
      'https://hooks0.example.com/',
    ]);
    const log = await collect(client.webhookDeliveries(endpoints[2]!.id, { limit: 2 }));
    expect(log.map((d) => d.eventType)).toEqual(['ping', 'ping', 'ping']);
  });

  it('treats a missing meta as the end of the list, not an error', async () => {
    const items = await collect(tenantClient({ baseUrl: bareUrl }).all<{ id: number }>('/v1/threads'));
    expect(items).toEqual([{ id: 1 }]);
  });

  it('surfaces the error envelope', async () => {
    await expect(tenantClient({ baseUrl, apiKey: 'wrong' }).page('/v1/threads')).rejects.toMatchObject({
      code: 'invalid_api_key',
      status: 401,
    });
  });

  it('reads the event log a page at a time from a kept cursor, and filters by a list of types', async () => {
    const client = tenantClient({ baseUrl, apiKey: tenant.apiKey });
    // The log shows an event once no older transaction runs anywhere in the cluster (another
    // test file's included): wait until it shows all twelve messages, then compare pages with it.
    const everything = await waitFor(async () => {
      const data = (await ctx.app.inject({ method: 'GET', url: '/v1/events?limit=100', headers: tenant.headers })).json().data as {
        id: string;
        type: string;
      }[];
      return data.filter((e) => e.type === 'message.created').length === 12 && data;
    }, 'the twelve message.created in the event log');
    expect(everything.length).toBeGreaterThan(12);
    const read: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await client.events({ after, limit: 5 });
      read.push(...page.data.map((e) => e.id));
      if (!page.meta.nextCursor) break;
      after = page.meta.nextCursor;
    }
    expect(read).toEqual(everything.map((e) => e.id));
    // Polling from the last cursor repeats nothing.
    expect((await client.events({ after })).data).toEqual([]);

    const created = await client.events({ types: ['message.created', 'contact.created'], limit: 100 });
    expect(created.data.map((e) => e.type).sort()).toEqual(
      everything
        .filter((e) => e.type === 'message.created' || e.type === 'contact.created')
        .map((e) => e.type)
        .sort(),
    );
    expect(created.data.filter((e) => e.type === 'message.created')).toHaveLength(12);
  });
});

describe('operator client', () => {
  it('walks offset pages while hasMore', async () => {
    const client = operatorClient({ baseUrl, adminKey: ADMIN_KEY });
    const tenants = await collect(client.all<{ id: number }>('/v1/operator/tenants', { limit: 3 }));
    const total = (await client.page('/v1/operator/tenants')).meta.total;
    expect(tenants).toHaveLength(total);
    expect(new Set(tenants.map((t) => t.id)).size).toBe(total);
  });

  it('walks a transcript by cursor', async () => {
    const client = operatorClient({ baseUrl, adminKey: ADMIN_KEY });
    const [thread] = await collect(tenantClient({ baseUrl, apiKey: tenant.apiKey }).all<{ id: number }>('/v1/threads'));
    const transcript = await collect(
      client.transcript<{ text: string }>(`/v1/operator/tenants/${tenant.workspace.id}/threads/${thread!.id}/messages`, { limit: 4 }),
    );
    expect(transcript).toHaveLength(12);
    const missing = await fetch(`${baseUrl}/v1/operator/tenants/${tenant.workspace.id}/threads/999999/messages`, {
      headers: { 'x-service-admin-api-key': ADMIN_KEY },
    });
    expect(missing.status).toBe(404);
  });

  it('raises malformed_response (502) when a list comes back without pagination meta', async () => {
    const client = operatorClient({ baseUrl: bareUrl });
    for (const attempt of [
      () => client.page('/v1/operator/tenants'),
      () => collect(client.transcript('/v1/operator/tenants/1/threads/1/messages')),
    ]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InboxClientError);
      expect(err).toMatchObject({ code: 'malformed_response', status: 502 });
    }
  });
});
