import type { Readable } from 'node:stream';
import type { AttachmentView } from '../attachments/attachments.queries.js';
import { linkKey, signedLink } from '../attachments/signed-links.js';
import type { OutboundAttachment } from '../channels/channel.js';
import type { Deps } from '../deps.js';

/** A reply's attachment whose bytes are not in the storage: no later attempt will find them. */
export class MissingBytesError extends Error {
  override name = 'MissingBytesError';
}

/**
 * A reply's stored attachments as a channel's `send` takes them: signed links ending in the
 * file's name, made now (each attempt signs afresh, so a retry's links are valid for another
 * 15 minutes), and the bytes opened from the storage only when a channel reads them.
 */
export function outboundAttachments(deps: Deps, rows: readonly AttachmentView[]): OutboundAttachment[] {
  const link = { publicUrl: deps.config.publicUrl, key: linkKey(deps.secretKey), now: deps.now() };
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    contentType: row.content_type,
    filename: row.filename ?? `attachment-${row.id}`,
    size: row.size ?? 0,
    // Named after the file: a provider that fetches by URL names the file after its last segment.
    url: signedLink(link, row.id, { name: row.filename }),
    async open(): Promise<Readable> {
      const stream = row.storage_key === null ? undefined : await deps.storage.get(row.storage_key);
      if (!stream) throw new MissingBytesError(`attachment ${row.id}: its bytes are not in the storage`);
      return stream;
    },
  }));
}
