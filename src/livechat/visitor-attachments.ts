import { findMessageAttachments } from '../attachments/reply-attachments.queries.js';
import { linkKey, signedLink } from '../attachments/signed-links.js';
import type { Deps } from '../deps.js';

/**
 * A message's attachments as its visitor's socket shows them: a visitor has no credential but
 * the widget's, so each `url` is a signed link (valid 15 minutes; the widget reads the thread
 * again for fresh ones), and `error` is the service's side of a failure, not the visitor's.
 */
export async function visitorAttachments(deps: Deps, messageId: number) {
  const rows = await findMessageAttachments(deps.db, [messageId]);
  const link = { publicUrl: deps.config.publicUrl, key: linkKey(deps.secretKey), now: deps.now() };
  return rows.map((row) => ({
    id: row.id,
    messageId: row.message_id,
    kind: row.kind,
    contentType: row.content_type,
    filename: row.filename,
    size: row.size,
    status: row.status,
    error: null,
    url: row.status === 'stored' ? signedLink(link, row.id) : null,
  }));
}
