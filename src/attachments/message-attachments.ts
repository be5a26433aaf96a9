import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MessagesTable } from '../db/types.js';
import { messageResource } from '../messaging/messaging.resources.js';
import { attachmentsOf } from './attachments.queries.js';
import { type AttachmentUrl, attachmentResource } from './attachments.resources.js';

/**
 * Messages as the API answers them, each with its attachments: one query for the whole list
 * (a page, a search's hits, a reply), never one per message. `url` makes each attachment's
 * link (contentUrl for tenants, signedUrls for live chat visitors). `bare`: messages the caller
 * knows carry none (a reply it wrote without files), for which nothing is read.
 */
export async function messageResources(
  db: Executor,
  rows: readonly Selectable<MessagesTable>[],
  url: AttachmentUrl,
  options: { bare?: ReadonlySet<number> } = {},
) {
  const { bare } = options;
  const byMessage = await attachmentsOf(
    db,
    rows.flatMap((r) => (bare?.has(r.id) ? [] : [r.id])),
  );
  return rows.map((row) =>
    messageResource(
      row,
      (byMessage.get(row.id) ?? []).map((a) => attachmentResource(a, url)),
    ),
  );
}
