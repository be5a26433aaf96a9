/**
 * `text` with every secret cut out, longest first so a secret that contains another is cut whole.
 * A provider, a library or an SMTP server may echo a token or a URL with its password back in
 * an error; every error text that is stored or shown goes through this first. Values shorter
 * than 4 characters are left alone: cutting them would mangle ordinary words.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  const sorted = secrets.filter((s): s is string => !!s && s.length >= 4).sort((a, b) => b.length - a.length);
  for (const secret of sorted) out = out.replaceAll(secret, '[redacted]');
  return out;
}
