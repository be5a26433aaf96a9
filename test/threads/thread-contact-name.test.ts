import { describe, expect, it } from 'vitest';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { listenToBus } from './workflow-helpers.js';

/*
 * A Thread carries its contact's name, so a list of threads needs no read per contact: in the
 * list, the single thread, and the thread events sent to sockets and endpoints.
 */
const ctx = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id);
const bus = await listenToBus(ctx.database.url);
const endpoint = await ctx.app.inject({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  headers: tenant.headers,
  payload: { url: 'http://127.0.0.1:9/hook', events: ['thread.created', 'thread.updated'] },
});
expect(endpoint.statusCode, endpoint.body).toBe(201);

/** One inbound message from `from`, named `name` by the provider (or not at all). */
async function inbound(from: string, messageId: string, name?: string) {
  await ctx.deps.db.transaction().execute((trx) =>
    applyDeliveries(
      ctx.deps,
      trx,
      [
        {
          deliveryId: messageId,
          integrationKey: connection.integrationKey,
          events: [
            {
              type: 'message',
              externalAccountId: connection.externalAccountId,
              externalMessageId: messageId,
              contact: { externalId: from, ...(name ? { name } : {}) },
              text: 'hello',
            },
          ],
        },
      ],
      new Date(),
    ),
  );
}

const threadOf = async (from: string) =>
  (await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: tenant.headers }))
    .json()
    .data.find((t: { contactId: number }) => t.contactId === Number(contactIdOf(from)));
const contacts = new Map<string, number>();
const contactIdOf = (from: string) => contacts.get(from);
async function learnContact(from: string) {
  const row = await ctx.deps.db
    .selectFrom('contact_handles')
    .select('contact_id')
    .where('workspace_id', '=', tenant.workspace.id)
    .where('external_id', '=', from)
    .executeTakeFirstOrThrow();
  contacts.set(from, row.contact_id);
}
const outbox = async (type: string) =>
  (await ctx.deps.db.selectFrom('webhook_events').select('body').where('type', '=', type).orderBy('created_at').execute()).map(
    (r) => JSON.parse(r.body).data as { id: number; contactName: string | null },
  );

describe('Thread.contactName', () => {
  it('is the contact’s name in the list, the thread and thread.created / thread.updated', async () => {
    await inbound('+15550001', 'wamid.named-1', 'Grace Hopper');
    await learnContact('+15550001');
    const listed = await threadOf('+15550001');
    expect(listed).toMatchObject({ contactName: 'Grace Hopper' });
    const one = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${listed.id}`, headers: tenant.headers });
    expect(one.json().data.contactName).toBe('Grace Hopper');

    expect((await outbox('thread.created')).find((t) => t.id === listed.id)?.contactName).toBe('Grace Hopper');
    // Sockets are told of a new thread by thread.updated (thread.created goes to endpoints).

    // A second message touches the thread: thread.updated still names the contact.
    await inbound('+15550001', 'wamid.named-2');
    await waitFor(async () => bus.find((e) => e.type === 'thread.updated' && e.data.id === listed.id), 'thread.updated on the bus');
    expect(bus.find((e) => e.type === 'thread.updated' && e.data.id === listed.id)!.data).toMatchObject({
      contactName: 'Grace Hopper',
    });
    expect((await outbox('thread.updated')).find((t) => t.id === listed.id)?.contactName).toBe('Grace Hopper');
  });

  it('is null while the contact has none, and the name a later message brings fills it in', async () => {
    await inbound('+15550002', 'wamid.anon-1');
    await learnContact('+15550002');
    expect((await threadOf('+15550002')).contactName).toBeNull();

    await inbound('+15550002', 'wamid.anon-2', 'Katherine Johnson');
    const thread = await threadOf('+15550002');
    expect(thread.contactName).toBe('Katherine Johnson');
    // The announcement of that very batch already has it (read in the upsert's statement).
    const updates = (await outbox('thread.updated')).filter((t) => t.id === thread.id);
    expect(updates.at(-1)?.contactName).toBe('Katherine Johnson');
  });

  it('is in the thread a PATCH answers and announces', async () => {
    await inbound('+15550003', 'wamid.patch-1', 'Dorothy Vaughan');
    await learnContact('+15550003');
    const { id } = await threadOf('+15550003');
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/threads/${id}`,
      headers: tenant.headers,
      payload: { status: 'resolved' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.contactName).toBe('Dorothy Vaughan');
  });
});
