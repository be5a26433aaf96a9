import { runtime } from './runtime.js';

/**
 * A multipart/form-data body of one file, built by hand so the client needs neither the
 * DOM's FormData nor a Node type: bytes in, bytes out. The boundary is random and checked
 * against the file, so no byte sequence in the file can end its part early.
 */
export function multipartFile(field: string, filename: string, contentType: string, bytes: Uint8Array) {
  const encoder = new runtime.TextEncoder();
  let boundary: string;
  do boundary = `----inbox-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  while (contains(bytes, encoder.encode(boundary)));
  // Quotes, backslashes and line breaks cannot stand in a quoted header value: percent-encoded.
  const quoted = filename.replace(/["\\\r\n%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  const head = encoder.encode(
    `--${boundary}\r\ncontent-disposition: form-data; name="${field}"; filename="${quoted}"\r\ncontent-type: ${contentType}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(head.byteLength + bytes.byteLength + tail.byteLength);
  body.set(head, 0);
  body.set(bytes, head.byteLength);
  body.set(tail, head.byteLength + bytes.byteLength);
  return { bytes: body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.byteLength <= haystack.byteLength; i++) {
    for (let j = 0; j < needle.byteLength; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}
