import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { type AttachmentView, insertUpload } from './attachments.queries.js';
import { kindOf } from './attachments.resources.js';
import { contentTypeOf, SNIFF_BYTES } from './content-type.js';
import { StorageUnavailableError, TooLargeError } from './storage.js';

export interface UploadInput {
  workspaceId: number;
  /** A live chat visitor's upload: only that visitor may send it. */
  visitorId: number | null;
  /** The bytes as they arrive (the multipart part's stream). */
  body: AsyncIterable<Uint8Array>;
  declaredType: string | undefined;
  filename: string | null;
  /** The largest file this upload may be (INBOX_MAX_ATTACHMENT_BYTES, less for a visitor). */
  maxBytes: number;
}

/** Reading the request's bytes failed (a cut or malformed body): the client's fault, not the store's. */
class UploadBodyError extends Error {
  constructor(cause: unknown) {
    super('the upload body could not be read', { cause });
  }
}

/** The multipart reader stopped the file at its size limit (@fastify/multipart's own error). */
const isMultipartTooLarge = (err: unknown) => (err as { code?: unknown } | null)?.code === 'FST_REQ_FILE_TOO_LARGE';

/**
 * Stores an upload (docs/attachments.md, "Uploads"): the bytes stream into storage under a
 * fresh key as they arrive, never held whole; the first SNIFF_BYTES are kept aside on the
 * way to read the type from. Only once every byte is stored is the row written, so a store
 * that fails (503) or a file over `maxBytes` (413, stopped at the limit)
 * leaves no row; a row that cannot be written takes its bytes with it. `maxBytes` is the
 * upload's limit: INBOX_MAX_ATTACHMENT_BYTES, or a visitor's smaller one.
 */
export async function storeUpload(
  deps: Pick<Deps, 'db' | 'storage' | 'config' | 'now' | 'log'>,
  input: UploadInput,
): Promise<AttachmentView> {
  const key = `upload/${randomUUID()}`;
  const head: Buffer[] = [];
  let headBytes = 0;
  async function* teed() {
    const pieces = input.body[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await pieces.next();
      } catch (err) {
        throw new UploadBodyError(err);
      }
      if (next.done) return;
      const piece = next.value;
      if (headBytes < SNIFF_BYTES) {
        const take = Buffer.from(piece.buffer, piece.byteOffset, Math.min(piece.byteLength, SNIFF_BYTES - headBytes));
        head.push(Buffer.from(take));
        headBytes += take.byteLength;
      }
      yield piece;
    }
  }
  const max = input.maxBytes;
  let size: number;
  try {
    ({ size } = await deps.storage.put(key, teed(), { maxBytes: max }));
  } catch (err) {
    if (err instanceof TooLargeError || isMultipartTooLarge(err)) throw errors.attachmentTooLarge(max);
    if (err instanceof UploadBodyError) throw errors.badRequest('the upload ended before its file did (a malformed or cut multipart body)');
    if (err instanceof StorageUnavailableError) {
      deps.log.warn({ err }, 'attachment storage unavailable during an upload');
      throw errors.unavailable('attachment storage is unavailable; nothing was kept, retry shortly', 5);
    }
    throw err;
  }
  try {
    const contentType = await contentTypeOf(Buffer.concat(head, headBytes), input.declaredType);
    return await insertUpload(deps.db, {
      workspaceId: input.workspaceId,
      kind: kindOf(contentType),
      contentType,
      filename: input.filename,
      size,
      storageKey: key,
      visitorId: input.visitorId,
      now: deps.now(),
    });
  } catch (err) {
    await deps.storage.delete(key).catch((cleanup) => deps.log.warn({ err: cleanup }, 'could not remove the bytes of an upload not kept'));
    throw err;
  }
}
