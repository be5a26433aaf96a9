import busboy from 'busboy';
import { imapMailFile } from '../channels/email-imap.js';
import { MediaFetchError } from './media-download.js';

/** A stored delivery: its UTF-8 text, and its exact bytes when the text does not hold them. */
export interface StoredDelivery {
  text: string;
  bytes: Buffer | null;
}

/**
 * The bytes of a file that travelled inside a delivery (an e-mail's attachments), read again
 * from the stored delivery: the neutral `email` format's `attachments[].content` and
 * Postmark's `Attachments[].Content` (base64) from its text, Mailgun's `attachment-N` form
 * parts from its exact bytes when they were kept. The message's provider id picks the mail
 * when a body holds several (the neutral format's `events`). Files are as large as the
 * delivery, which the body limit already bounds.
 */
export async function deliveryFile(
  integrationKey: string,
  delivery: StoredDelivery,
  messageExternalId: string,
  index: number,
): Promise<Buffer> {
  switch (integrationKey) {
    case 'email':
      return base64File(neutralMail(delivery.text, messageExternalId)?.attachments, index, 'content');
    case 'email.postmark':
      return base64File(json(delivery.text)?.Attachments, index, 'Content');
    case 'email.mailgun':
      return multipartFile(delivery, index);
    case 'email.imap': {
      const file = await imapMailFile(delivery.bytes ?? Buffer.from(delivery.text, 'utf8'), index);
      if (!file) throw new MediaFetchError(`the delivery has no file ${index}`, false);
      return file;
    }
    default:
      throw new MediaFetchError(`${integrationKey} deliveries carry no files`, false);
  }
}

function json(rawBody: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(rawBody);
    return typeof v === 'object' && v !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The inbound mail of a neutral `email` body (one event, a list, or `{events}`) with this id. */
function neutralMail(rawBody: string, messageId: string): Record<string, unknown> | undefined {
  const payload: unknown = json(rawBody);
  const list = Array.isArray(payload)
    ? payload
    : Array.isArray((payload as { events?: unknown })?.events)
      ? (payload as { events: unknown[] }).events
      : [payload];
  return list.find(
    (e): e is Record<string, unknown> =>
      typeof e === 'object' &&
      e !== null &&
      (e as { type?: unknown }).type === 'inbound' &&
      String((e as { messageId?: unknown }).messageId).trim() === messageId,
  );
}

function base64File(list: unknown, index: number, field: string): Buffer {
  const entry = Array.isArray(list) ? list[index] : undefined;
  const content = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[field] : undefined;
  if (typeof content !== 'string') throw new MediaFetchError(`the delivery has no file ${index}`, false);
  return Buffer.from(content, 'base64');
}

/** U+FFFD as UTF-8: what a byte that was not UTF-8 became when the body was stored as text. */
const REPLACEMENT = Buffer.from('\uFFFD', 'utf8');

/**
 * The `index`-th file part of a multipart body, from its exact bytes when they were kept.
 * Without them the text is the body byte for byte unless it holds U+FFFD (see bytesToKeep in
 * channels/channel.ts); a row stored before bytes were kept may have lost some in a binary
 * part, so such a file fails rather than be stored changed.
 */
async function multipartFile(delivery: StoredDelivery, index: number): Promise<Buffer> {
  const body = delivery.bytes ?? Buffer.from(delivery.text, 'utf8');
  // Read as parseFormBody reads it (channels/form-data.ts): up to 70 characters of UTF-8.
  const boundary = /^--([^\r\n]{1,70})\r\n/.exec(body.subarray(0, 300).toString('utf8'))?.[1];
  if (boundary === undefined) throw new MediaFetchError(`the delivery has no file ${index}`, false);
  const files: Buffer[][] = [];
  const parser = busboy({
    headers: { 'content-type': `multipart/form-data; boundary="${boundary.replaceAll('"', '')}"` },
    defParamCharset: 'utf8',
    limits: { fileSize: Number.MAX_SAFE_INTEGER },
  });
  // A part's bytes arrive through its stream's events, not during write(): wait for the end.
  const done = new Promise<void>((resolve) => {
    parser.on('close', resolve);
    parser.on('error', () => resolve());
  });
  parser.on('file', (_field, stream) => {
    const parts: Buffer[] = [];
    files.push(parts);
    stream.on('data', (d: Buffer) => parts.push(d));
    stream.on('error', () => {});
  });
  parser.end(body);
  await done;
  const parts = files[index];
  if (!parts) throw new MediaFetchError(`the delivery has no file ${index}`, false);
  const bytes = Buffer.concat(parts);
  if (delivery.bytes === null && bytes.includes(REPLACEMENT)) {
    throw new MediaFetchError('the stored delivery does not hold this file byte for byte (a binary form part): it cannot be kept', false);
  }
  return bytes;
}
