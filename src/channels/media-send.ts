import type { Readable } from 'node:stream';
import type { SendOutcome } from './channel.js';

/**
 * Sends a reply that a provider takes as several calls (Messenger's text, then its file), one
 * after the other: the first outcome that is not `sent` ends it and is the reply's outcome;
 * otherwise the last call's id is the reply's `externalId` (docs/attachments.md, "Outbound").
 * A retry after a later call failed sends the earlier ones again: the contact may see the
 * text twice, never lose the file.
 */
export async function inTurn(calls: readonly (() => Promise<SendOutcome>)[]): Promise<SendOutcome> {
  let last: SendOutcome = { outcome: 'failed', error: 'nothing to send' };
  for (const call of calls) {
    last = await call();
    if (last.outcome !== 'sent') return last;
  }
  return last;
}

/** A stream's bytes in one buffer: only for files under INBOX_MAX_ATTACHMENT_BYTES (25 MB by default). */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
