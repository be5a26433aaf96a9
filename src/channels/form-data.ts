import busboy from 'busboy';

/** A form body read into its fields (the first value of each name) and its files' names and types. */
export interface ParsedForm {
  fields: Record<string, string>;
  files: { field: string; filename?: string; contentType?: string }[];
}

/** Generous bounds: the body itself is already bounded by the service's body limit. */
const LIMITS = { fieldSize: 25 * 1024 * 1024, fields: 1000, files: 100, parts: 1100 };

/**
 * Reads a form body as a provider posts it: `multipart/form-data` when it starts with a
 * boundary line (`--<boundary>`), else `application/x-www-form-urlencoded`. The boundary is
 * taken from the body rather than a Content-Type header because a stored delivery is read
 * again from its raw body alone. Undefined when the body is not a complete, well-formed form.
 */
export function parseFormBody(text: string): ParsedForm | undefined {
  const boundary = /^--([^\r\n]{1,70})\r\n/.exec(text)?.[1];
  if (boundary === undefined) {
    if (text.trimStart().startsWith('--')) return undefined; // a boundary line that is not one
    const fields: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(text)) if (!Object.hasOwn(fields, name)) fields[name] = value;
    return { fields, files: [] };
  }
  return parseMultipart(Buffer.from(text, 'utf8'), boundary);
}

/**
 * multipart/form-data by busboy (the parser Fastify's own multipart support grew from). The
 * adapter interface reads bodies synchronously, and busboy parses everything one write hands
 * it before that write returns: fields and file headers are emitted during `write`. File
 * contents are dropped (attachments are placeholders until media are fetched). The closing
 * delimiter must be there, so a truncated body is refused rather than read in part.
 */
function parseMultipart(bytes: Buffer, boundary: string): ParsedForm | undefined {
  if (!bytes.includes(`\r\n--${boundary}--`)) return undefined;
  const form: ParsedForm = { fields: {}, files: [] };
  let malformed = false;
  const parser = busboy({
    headers: { 'content-type': `multipart/form-data; boundary="${boundary.replaceAll('"', '')}"` },
    limits: LIMITS,
    defParamCharset: 'utf8',
  });
  parser.on('field', (name, value) => {
    if (!Object.hasOwn(form.fields, name)) form.fields[name] = value;
  });
  parser.on('file', (field, stream, info) => {
    stream.on('error', () => {});
    stream.resume();
    form.files.push({ field, ...(info.filename ? { filename: info.filename } : {}), contentType: info.mimeType });
  });
  parser.on('error', () => {
    malformed = true;
  });
  try {
    parser.write(bytes);
  } catch {
    return undefined;
  }
  parser.destroy();
  return malformed ? undefined : form;
}
