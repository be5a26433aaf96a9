import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { linkIsValid, linkKey } from '../../src/attachments/signed-links.js';
import type { AttachmentKind } from '../../src/db/types.js';
import type { Deps } from '../../src/deps.js';

/**
 * An upload as `POST /v1/attachments` leaves it: the bytes in the deployment's storage and a
 * `stored` row on no message. Answers its id.
 */
export async function storeUpload(
  deps: Deps,
  workspaceId: number,
  file: { bytes: Buffer; contentType: string; filename?: string; kind: AttachmentKind },
): Promise<number> {
  const key = `test/${randomUUID()}`;
  const { size } = await deps.storage.put(key, Readable.from([file.bytes]), { maxBytes: deps.config.maxAttachmentBytes });
  const row = await deps.db
    .insertInto('attachments')
    .values({
      workspace_id: workspaceId,
      message_id: null,
      kind: file.kind,
      content_type: file.contentType,
      filename: file.filename ?? null,
      size,
      status: 'stored',
      storage_key: key,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A small file of random bytes (a PNG's signature first, so it looks like what it claims). */
export function someBytes(size = 4096): Buffer {
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(size - 8)]);
}

export interface LinkServer {
  url: string;
  /** Every signed link asked for, with what it was answered. */
  served: { path: string; status: number }[];
  close(): Promise<void>;
}

/**
 * Serves `GET /v1/attachments/:id/content[/<name>]?expires=&signature=` the way the service's content
 * route serves a signed link: the signature checked under the link key, the bytes streamed
 * from the storage; anything else 401/404. Tests make it INBOX_PUBLIC_URL, so the fake
 * providers fetch replies' files through a real signed link. `deps` is read per request (the
 * context is built after this server, with its URL).
 */
export async function startLinkServer(deps: () => Deps): Promise<LinkServer> {
  const served: LinkServer['served'] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://links');
    const answer = (status: number) => {
      served.push({ path: url.pathname, status });
      res.writeHead(status).end();
    };
    void (async () => {
      // The name a provider's link ends in (`…/content/<name>`) is ignored, as the route does.
      const id = Number(/^\/v1\/attachments\/(\d+)\/content(?:\/[^/]+)?$/.exec(url.pathname)?.[1]);
      const d = deps();
      const expires = Number(url.searchParams.get('expires'));
      const signature = url.searchParams.get('signature') ?? '';
      if (!id || !linkIsValid(linkKey(d.secretKey), id, expires, signature, d.now())) return answer(401);
      const row = await d.db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirst();
      const stream = row?.storage_key ? await d.storage.get(row.storage_key) : undefined;
      if (!row || !stream) return answer(404);
      served.push({ path: url.pathname, status: 200 });
      res.writeHead(200, { 'content-type': row.content_type });
      await pipeline(stream, res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A thread whose contact has `handle` on the connection's channel, written to just now (windows open). */
export async function seedReplyThread(deps: Deps, connection: { id: number; workspaceId: number; integrationKey: string }, handle: string) {
  const contact = await deps.db
    .insertInto('contacts')
    .values({ workspace_id: connection.workspaceId, name: 'Ada' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await deps.db
    .insertInto('contact_handles')
    .values({
      workspace_id: connection.workspaceId,
      integration_key: connection.integrationKey,
      external_id: handle,
      contact_id: contact.id,
    })
    .execute();
  const now = new Date();
  return deps.db
    .insertInto('threads')
    .values({
      workspace_id: connection.workspaceId,
      connection_id: connection.id,
      contact_id: contact.id,
      last_message_at: now,
      last_inbound_at: now,
      last_message_preview: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
