import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { IntegrationConfig } from '../../src/config.js';
import type { TestContext } from './app.js';

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

/** The secret each Meta-signed integration's deliveries are signed with, as its config names it. */
const META_SECRETS = {
  whatsapp: (cfg: IntegrationConfig) => cfg.webhookSecret,
  'social_one.native': (cfg: IntegrationConfig) => cfg.appSecret,
  'social_two.native': (cfg: IntegrationConfig) => cfg.appSecret,
};

/**
 * Posts a provider delivery to the app as the provider would: `payload` (an object is sent as
 * its JSON) to `/webhooks/<key>`, with Meta's `x-hub-signature-256` computed over the exact body
 * from the secret the context's INBOX_INTEGRATIONS gives that key. Answers the app's response.
 */
export async function deliverSigned(ctx: Pick<TestContext, 'app' | 'deps'>, key: keyof typeof META_SECRETS, payload: string | object) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  const secret = META_SECRETS[key](ctx.deps.config.integrations[key] ?? {});
  if (!secret) throw new Error(`deliverSigned: INBOX_INTEGRATIONS of this test gives ${key} no secret`);
  return ctx.app.inject({
    method: 'POST',
    url: `/webhooks/${key}`,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(secret, body)}` },
    payload: body,
  });
}

/** Posts a delivery, signed as its provider signs (`headers`), to `/webhooks/<key>` and expects 200. */
export async function postDelivery(
  ctx: Pick<TestContext, 'app'>,
  key: string,
  body: string | Buffer,
  headers: Record<string, string>,
  contentType = 'application/json',
): Promise<void> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/${key}`,
    headers: { 'content-type': contentType, ...headers },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
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
