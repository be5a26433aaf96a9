import type { Selectable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { MessagesTable } from '../db/types.js';
import { messageResource } from '../messaging/messaging.resources.js';
import { attachmentsOf } from './attachments.queries.js';
import { type AttachmentUrl, attachmentResource } from './attachments.resources.js';

/**
 * Messages as the API answers them, each with its attachments: one query for the whole list
 * (a page, a search's hits, a reply), never one per message. `url` makes each attachment's
 * link (contentUrl for tenants, signedUrls for live chat visitors).
 */
export async function messageResources(db: Executor, rows: readonly Selectable<MessagesTable>[], url: AttachmentUrl) {
  const byMessage = await attachmentsOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) =>
    messageResource(
      row,
      (byMessage.get(row.id) ?? []).map((a) => attachmentResource(a, url)),
    ),
  );
}
