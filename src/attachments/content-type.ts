import { fileTypeFromBuffer } from 'file-type';
import { truncate } from '../text/truncate.js';

/** How many leading bytes the type is read from (file-type's own detection size). */
export const SNIFF_BYTES = 4100;
export const OCTET_STREAM = 'application/octet-stream';

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** A declared type, without its parameters and lower-cased, or undefined when it is not a type. */
export function cleanContentType(declared: string | undefined): string | undefined {
  const type = declared?.split(';')[0]?.trim().toLowerCase();
  return type && MIME.test(type) ? type : undefined;
}

/** Office and OpenDocument files: ZIP containers, whose telling entry may lie past the bytes read. */
export const ZIPPED_DOCUMENTS = [
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
] as const;

/**
 * Containers whose first bytes say only "a container": an Office document of before 2007 is
 * a Compound File (`application/x-cfb` to file-type), and a document whose ZIP lists its
 * telling entry past the bytes read is `application/zip`. The sender's declared type is kept
 * when it names a document of that container: a customer's `.xls` stays a spreadsheet.
 */
const CONTAINER_DOCUMENTS = new Map<string, ReadonlySet<string>>([
  [
    'application/x-cfb',
    new Set(['application/msword', 'application/vnd.ms-excel', 'application/vnd.ms-powerpoint', 'application/vnd.ms-outlook']),
  ],
  ['application/zip', new Set(ZIPPED_DOCUMENTS)],
]);

/**
 * The type of a file from its first bytes (`file-type`); the sender's declared type only
 * when the bytes do not say (text formats such as SVG, HTML, CSV have no signature) or say
 * only the container it names a document of (CONTAINER_DOCUMENTS), then
 * application/octet-stream. A PNG declared `application/pdf` is stored as the PNG it is.
 */
export async function contentTypeOf(head: Uint8Array, declared: string | undefined): Promise<string> {
  const detected = head.byteLength > 0 ? await fileTypeFromBuffer(head) : undefined;
  const named = cleanContentType(declared);
  if (detected && named && CONTAINER_DOCUMENTS.get(detected.mime)?.has(named)) return named;
  return detected?.mime ?? named ?? OCTET_STREAM;
}

/**
 * A filename safe to keep and show: the last path segment, without control characters,
 * at most 255 characters; null when nothing is left.
 */
export function cleanFilename(name: string | undefined): string | null {
  if (!name) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const base = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return base === '' || base === '.' || base === '..' ? null : truncate(base, 255);
}
