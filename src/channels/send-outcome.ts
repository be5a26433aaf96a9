import { redactSecrets } from '../text/redact.js';
import { truncate } from '../text/truncate.js';
import { wellFormed } from '../text/well-formed.js';
import { type SendOutcome, storableText } from './channel.js';

/** docs/replies.md: a provider's error text is kept to at most this many characters. */
export const SEND_ERROR_MAX = 1000;

/**
 * Builds outcomes whose error text can be stored and shown as it is: every secret of the
 * attempt is cut out first (a provider or a library may echo a token or a URL with a
 * password back), then the text is bounded. A NUL or a lone surrogate in a provider's answer
 * becomes U+FFFD: Postgres refuses both, and one such error would fail its whole batch's commit.
 */
export function outcomes(secrets: readonly (string | undefined)[]) {
  const clean = (error: string) => truncate(storableText(wellFormed(redactSecrets(error, secrets))), SEND_ERROR_MAX);
  return {
    failed: (error: string): SendOutcome => ({ outcome: 'failed', error: clean(error) }),
    retry: (error: string, retryAfterSeconds?: number): SendOutcome =>
      retryAfterSeconds === undefined
        ? { outcome: 'retry', error: clean(error) }
        : { outcome: 'retry', error: clean(error), retryAfterSeconds },
  };
}

/**
 * `failed`: the connection lacks what this channel needs to send, and retrying cannot help.
 * `required` holds the values the channel needs; the empty ones are named.
 */
export function noCredentials(key: string, required: Record<string, string | undefined>): SendOutcome {
  const missing = Object.keys(required).filter((name) => !required[name]);
  return {
    outcome: 'failed',
    error: `the ${key} connection has no credentials (${missing.join(', ')} missing): set them with PATCH /v1/connections/:id`,
  };
}
