import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { seedMessage, seedThread } from '../helpers/threads.js';

const ctx = await useTestContext();
const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });

/** The SDK's own client over Streamable HTTP, with the key as x-api-key or as a bearer token. */
async function connect(key: string, as: 'x-api-key' | 'bearer' = 'x-api-key') {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  const headers: Record<string, string> = as === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`), { requestInit: { headers } }));
  return client;
}

const json = (result: Awaited<ReturnType<Client['callTool']>>) => JSON.parse((result.content as { text: string }[])[0]!.text);

async function workspace(scopes: string[]) {
  const tenant = await makeTenant(ctx.deps, { scopes });
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  await seedMessage(ctx.deps, thread, 'My parcel never arrived');
  return { tenant, thread };
}

describe('/mcp', () => {
  it('offers the eight tools to a write key and works the thread through them, within its workspace', async () => {
    const { tenant, thread } = await workspace(['write']);
    const { user } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const client = await connect(tenant.apiKey, 'bearer');
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(['add_note', 'assign', 'get_contact', 'get_thread', 'list_threads', 'reply', 'search_messages', 'set_status']);

    const listed = json(await client.callTool({ name: 'list_threads', arguments: { status: 'open' } }));
    expect(listed.data.map((t: { id: number }) => t.id)).toEqual([thread.id]);
    const got = json(await client.callTool({ name: 'get_thread', arguments: { threadId: thread.id } }));
    expect(got.data.messages.map((m: { text: string }) => m.text)).toEqual(['My parcel never arrived']);
    const found = json(await client.callTool({ name: 'search_messages', arguments: { q: 'parcel' } }));
    expect(found.data).toHaveLength(1);
    const contact = json(await client.callTool({ name: 'get_contact', arguments: { contactId: thread.contact_id } }));
    expect(contact.data.id).toBe(thread.contact_id);

    const note = json(await client.callTool({ name: 'add_note', arguments: { threadId: thread.id, text: 'checking with the carrier' } }));
    expect(note.data).toMatchObject({ kind: 'note', private: true });
    await client.callTool({ name: 'assign', arguments: { threadId: thread.id, assigneeId: user.id } });
    await client.callTool({ name: 'set_status', arguments: { threadId: thread.id, status: 'pending' } });
    const row = await ctx.deps.db
      .selectFrom('threads')
      .select(['status', 'assignee_id'])
      .where('id', '=', thread.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending', assignee_id: user.id });
    const sent = await client.callTool({ name: 'reply', arguments: { threadId: thread.id, text: 'It is on its way.' } });
    expect(json(sent).data).toMatchObject({ kind: 'message', direction: 'outbound', status: 'queued', text: 'It is on its way.' });

    // Another workspace's thread is not there for this key.
    const other = await workspace(['admin']);
    const foreign = await client.callTool({ name: 'get_thread', arguments: { threadId: other.thread.id } });
    expect(foreign.isError).toBe(true);
    expect(JSON.stringify(foreign.content)).toContain('not_found');
    await client.close();
  });

  it('gives a read key only the reading tools, and refuses a missing or wrong key', async () => {
    const { tenant, thread } = await workspace(['read']);
    const client = await connect(tenant.apiKey);
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(['get_contact', 'get_thread', 'list_threads', 'search_messages']);
    const write = await client.callTool({ name: 'add_note', arguments: { threadId: thread.id, text: 'x' } }).catch((err: Error) => err);
    expect(write instanceof Error || (write as { isError?: boolean }).isError).toBe(true);
    await client.close();

    for (const headers of [{}, { 'x-api-key': 'not-a-key' }] as Record<string, string>[]) {
      const res = await fetch(`${address}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
    }
  });
});
