import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { FakeImap } from '../../harness/imap.js';

/**
 * An `email.imap` connection on `server`, made through the API as a workspace admin makes one
 * (its SMTP a closed port unless `smtpUrl` is given); answers the Connection resource.
 */
export async function connectImapMailbox(
  app: FastifyInstance,
  headers: Record<string, string>,
  server: FakeImap,
  options: { account?: string; name?: string; smtpUrl?: string } = {},
): Promise<{ id: number } & Record<string, unknown>> {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/connections',
    headers,
    payload: {
      integrationKey: 'email.imap',
      externalAccountId: options.account ?? server.user,
      name: options.name ?? 'Support mailbox',
      credentials: { imapUrl: server.url, smtpUrl: options.smtpUrl ?? 'smtp://127.0.0.1:1', username: server.user, password: server.pass },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
