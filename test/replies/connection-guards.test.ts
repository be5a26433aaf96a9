import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { CREDENTIALS_DO_NOT_OPEN } from '../../src/connections/connection-credentials.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { fixture, waitFor } from '../helpers/webhooks.js';

// No INBOX_ALLOW_PRIVATE_SMTP here: a connection's smtpUrl may reach public addresses only.
const EMAIL_SECRET = 'connection-guards-email-secret';
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ email: { webhookSecret: EMAIL_SECRET } }) },
});
const tenant = await makeTenant(ctx.deps);

/** A service on loopback that is not SMTP and greets with a banner a scan would want. */
const BANNER = 'redis_version:7.2.4 role:master connected_clients:3';
const sockets = new Set<Socket>();
let connections = 0;
const banner = createServer((s) => {
  connections++;
  sockets.add(s);
  s.on('close', () => sockets.delete(s));
  s.write(`-ERR ${BANNER}\r\n`);
});
await new Promise<void>((resolve) => banner.listen(0, '127.0.0.1', () => resolve()));
const bannerPort = (banner.address() as AddressInfo).port;
afterAll(
  () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      banner.close(() => resolve());
    }),
);

/** An inbound mail to `address` opens a thread; the reply to it is sent through the connection. */
async function replyThroughEmail(
  address: string,
  credentials: { smtpUrl: string },
  beforeReply?: (connectionId: number) => Promise<unknown>,
) {
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
    integrationKey: 'email',
    externalAccountId: address,
    credentials,
  });
  await beforeReply?.(connection.id);
  const payload = JSON.parse(fixture('email', 'inbound.json'));
  payload.events[0].to = address;
  payload.events[0].messageId = `<${address}@mail.example.org>`;
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/email',
    headers: { 'content-type': 'application/json', 'x-vendor-auth': EMAIL_SECRET },
    payload: JSON.stringify(payload),
  });
  expect(res.statusCode).toBe(200);
  const inbound = await waitFor(
    () => ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', payload.events[0].messageId).executeTakeFirst(),
    'the inbound mail',
  );
  const sent = await ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${inbound.thread_id}/messages`,
    headers: { ...tenant.headers, 'content-type': 'application/json' },
    payload: { text: 'hello' },
  });
  expect(sent.statusCode).toBe(202);
  return { connection, messageId: sent.json().data.id as number };
}

const settled = (id: number) =>
  waitFor(async () => {
    const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);

describe('a reply over SMTP', () => {
  it('to a loopback smtpUrl is refused: the message fails at once, nothing connects, no banner text', async () => {
    const { messageId } = await replyThroughEmail('scan@acme.test', { smtpUrl: `smtp://127.0.0.1:${bannerPort}` });
    const message = await settled(messageId);
    expect(message.status).toBe('failed');
    expect(message.error).toBe('email: refused: 127.0.0.1 is a loopback address; SMTP servers must be on public addresses');
    expect(message.error).not.toContain('redis');
    expect(connections).toBe(0);
  });
});

describe('sealed connection credentials that do not open', () => {
  it('fail that message with a clear error; the process goes on sending', async () => {
    // The sealed value is one that does not open: another key's, or altered.
    const corrupt = (id: number) =>
      ctx.deps.db
        .updateTable('connections')
        .set({ credentials_sealed: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
        .where('id', '=', id)
        .execute();
    const { messageId } = await replyThroughEmail('sealed@acme.test', { smtpUrl: 'smtp://u:p@mail.example.org' }, corrupt);
    const failed = await settled(messageId);
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(CREDENTIALS_DO_NOT_OPEN);
    // Still serving: another connection's reply is worked after it.
    const { messageId: next } = await replyThroughEmail('after@acme.test', { smtpUrl: `smtp://127.0.0.1:${bannerPort}` });
    expect((await settled(next)).status).toBe('failed');
  });
});
