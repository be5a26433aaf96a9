import { type Static, Type } from 'typebox';
import type { AttachmentKind } from '../db/types.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { AttachmentView } from './attachments.queries.js';
import { linkKey, signedLink } from './signed-links.js';

/** The API's shape of a file on a message (docs/attachments.md). */

export const ATTACHMENT_KINDS = ['image', 'audio', 'video', 'sticker', 'file'] as const;
export const ATTACHMENT_STATUSES = ['pending', 'stored', 'failed'] as const;

export const AttachmentResource = Type.Object(
  {
    id: Type.Integer(),
    messageId: Nullable(Type.Integer({ description: 'the message carrying it; null for an upload no message has used yet' })),
    kind: StringEnum(ATTACHMENT_KINDS),
    contentType: Type.String({ description: 'the type read from the bytes (the declared one only when the bytes do not say)' }),
    filename: Nullable(Type.String()),
    size: Nullable(Type.Integer({ minimum: 0, description: 'bytes; null until stored' })),
    status: StringEnum(ATTACHMENT_STATUSES, { description: 'pending: still being fetched from the provider; failed: see error' }),
    error: Nullable(Type.String()),
    url: Type.String({ description: 'where the bytes are served: GET /v1/attachments/:id/content (a signed link for live chat visitors)' }),
  },
  { title: 'Attachment' },
);
export type Attachment = Static<typeof AttachmentResource>;

/** How an attachment's `url` is made: plain for tenants, signed for live chat visitors. */
export type AttachmentUrl = (id: number) => string;

/** The content route on INBOX_PUBLIC_URL: a tenant's credential is still needed to read it. */
export const contentUrl =
  (publicUrl: string): AttachmentUrl =>
  (id) =>
    `${publicUrl}/v1/attachments/${id}/content`;

/** Signed links (15 minutes) that serve the bytes with no credential: live chat visitors' view. */
export function signedUrls(deps: { config: { publicUrl: string }; secretKey: Buffer; now: () => Date }): AttachmentUrl {
  const options = { publicUrl: deps.config.publicUrl, key: linkKey(deps.secretKey), now: deps.now() };
  return (id) => signedLink(options, id);
}

export function attachmentResource(row: AttachmentView, url: AttachmentUrl): Attachment {
  return {
    id: row.id,
    messageId: row.message_id,
    kind: row.kind,
    contentType: row.content_type,
    filename: row.filename,
    size: row.size,
    status: row.status,
    error: row.error,
    url: url(row.id),
  };
}

/**
 * The kind a content type makes: images, audio and video by their family (a WebP sticker
 * stays `image` here; only a provider says a file is a sticker), anything else a `file`.
 */
export function kindOf(contentType: string): AttachmentKind {
  const family = contentType.split('/')[0];
  if (family === 'image' || family === 'audio' || family === 'video') return family;
  return 'file';
}
