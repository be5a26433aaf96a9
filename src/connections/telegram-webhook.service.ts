import { randomBytes } from 'node:crypto';
import { isObject } from '../channels/channel.js';
import { apiUrl, postToProvider } from '../channels/provider-http.js';
import { TELEGRAM_API } from '../channels/telegram.js';
import { sha256Hex } from '../crypto/hmac.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import { lockKey } from '../db/advisory-locks.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { CREDENTIALS_DO_NOT_OPEN, connectionCredentials } from './connection-credentials.js';
import { findConnection } from './connections.queries.js';
import { setTelegramSecretHash } from './telegram-webhook.queries.js';

/** setWebhook is one quick call; the operator waits for its answer. */
const SET_WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Points a Telegram bot at this service (docs/webhooks.md, "Connect a Telegram bot"): a new
 * random secret (43 characters of `A-Z a-z 0-9 _ -`, within Telegram's 1–256), given to
 * Telegram by `setWebhook` with the URL `<INBOX_PUBLIC_URL>/webhooks/telegram`, then kept as its
 * SHA-256 only. The secret is stored after Telegram took it: until then the bot's previous
 * secret goes on working, and a failed call changes nothing (call again).
 */
export async function setTelegramWebhook(deps: Deps, workspaceId: number, connectionId: number) {
  const connection = await findConnection(deps.db, workspaceId, connectionId);
  if (!connection) throw errors.notFound('connection');
  if (connection.integration_key !== 'telegram') throw errors.validation('only telegram connections have a Telegram webhook');
  let token: string | undefined;
  try {
    token = (await connectionCredentials(deps, connection.id))?.accessToken;
  } catch (err) {
    if (err instanceof SecretBoxError) throw errors.validation(CREDENTIALS_DO_NOT_OPEN);
    throw err;
  }
  if (!token) throw errors.validation('the connection has no bot token: set credentials.accessToken with PATCH /v1/connections/:id');

  const url = `${deps.config.publicUrl}/webhooks/telegram`;
  // One call per connection at a time (a lock until the secret is stored): two at once would
  // each give Telegram a secret and could store them in the other order, leaving the bot
  // sending a secret whose hash is not the one kept, every update refused.
  return deps.db.transaction().execute(async (trx) => {
    await lockKey(trx, `inbox:telegram-webhook:${connection.id}`);
    const secret = randomBytes(32).toString('base64url');
    const outcome = await postToProvider({
      key: 'telegram',
      url: apiUrl(deps.config.integrations.telegram?.apiBaseUrl ?? TELEGRAM_API, `/bot${token}/setWebhook`),
      headers: {},
      body: { json: { url, secret_token: secret } },
      timeoutMs: SET_WEBHOOK_TIMEOUT_MS,
      secrets: [token, secret],
      idField: 'ok',
      readId: (body) => (isObject(body) && body.ok === true ? 'ok' : undefined),
    });
    if (outcome.outcome !== 'sent') throw errors.providerError(`Telegram refused setWebhook: ${outcome.error}`);
    await setTelegramSecretHash(trx, connection.id, sha256Hex(secret));
    return { connectionId: connection.id, url };
  });
}
