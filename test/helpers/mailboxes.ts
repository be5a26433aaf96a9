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

/**
 * An RFC 822 plain-text mail as a mail server would hold it. `references` is written only when
 * given: a client that answers with In-Reply-To alone is a case of its own.
 */
export function rawMail(m: {
  text: string;
  id?: string;
  from?: string;
  to?: string;
  subject?: string;
  inReplyTo?: string;
  references?: string;
  headers?: string[];
}): string {
  return [
    ...(m.from === undefined ? [] : [`From: ${m.from}`]),
    `To: ${m.to ?? 'Support <support@mailbox.test>'}`,
    `Subject: ${m.subject ?? 'Hello'}`,
    ...(m.id ? [`Message-ID: ${m.id}`] : []),
    ...(m.inReplyTo ? [`In-Reply-To: ${m.inReplyTo}`] : []),
    ...(m.references ? [`References: ${m.references}`] : []),
    ...(m.headers ?? []),
    'Date: Thu, 26 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    m.text,
    '',
  ].join('\r\n');
}
