import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/webhooks');

/** A provider payload from test/fixtures/webhooks/<key>/<name>, as the exact text sent. */
export function fixture(key: string, name: string): string {
  return readFileSync(path.join(FIXTURES, key, name), 'utf8').trimEnd();
}

/** Lowercase hex HMAC-SHA256 of a string's UTF-8 or of exact bytes, computed independently of the service's helper. */
export function sign(secret: string, body: string | Buffer): string {
  return (typeof body === 'string' ? createHmac('sha256', secret).update(body, 'utf8') : createHmac('sha256', secret).update(body)).digest(
    'hex',
  );
}

/** Polls `check` until it returns a truthy value or the deadline passes; never a guessed sleep. */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
