/** One RFC 2047 encoded word: `=?charset(*language)?B|Q?text?=`. */
const WORD = /=\?([^?\s*]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/g;

/**
 * A header value with its RFC 2047 encoded words (`=?UTF-8?B?…?=`, `=?ISO-8859-1?Q?…?=`)
 * decoded, as a mail client shows it. Adjacent words of one charset are decoded together (a
 * character may be split between them) and the space between encoded words is dropped
 * (RFC 2047 §6.2). A word of an unknown charset is left as written; line breaks become
 * spaces, so a decoded value stays one line. A value without `=?` comes back unchanged, so
 * text a provider already decoded is not changed again.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let at = 0;
  let run: { charset: string; bytes: Buffer[]; raw: string } | undefined;
  const flush = () => {
    if (!run) return;
    out += decode(run.charset, Buffer.concat(run.bytes)) ?? run.raw;
    run = undefined;
  };
  for (const m of value.matchAll(WORD)) {
    const between = value.slice(at, m.index);
    const adjacent = run !== undefined && /^\s*$/.test(between);
    const charset = m[1]!.toLowerCase();
    const bytes = wordBytes(m[2]!, m[3]!);
    if (adjacent && run!.charset === charset) {
      run!.bytes.push(bytes);
      run!.raw += m[0];
    } else {
      flush();
      if (!adjacent) out += between;
      run = { charset, bytes: [bytes], raw: m[0] };
    }
    at = m.index + m[0].length;
  }
  flush();
  out += value.slice(at);
  return out.replace(/\r\n|[\r\n]/g, ' ');
}

function wordBytes(encoding: string, text: string): Buffer {
  if (encoding.toUpperCase() === 'B') return Buffer.from(text, 'base64');
  const latin = text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(latin, 'latin1');
}

function decode(charset: string, bytes: Buffer): string | undefined {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return undefined;
  }
}
