import { open, SecretBoxError, seal } from '../crypto/secret-box.js';

/**
 * Endpoint signing secrets at rest: sealed under INBOX_SECRET_KEY like connection
 * credentials, bound to their row (`webhook-endpoint:<id>`), so a sealed value copied into
 * another endpoint does not open there.
 */
const aad = (endpointId: number) => `webhook-endpoint:${endpointId}`;

/** Where signing secrets are sealed (current and previous) and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_ENDPOINT_SECRETS = [
  { table: 'webhook_endpoints', column: 'secret_sealed', aad },
  { table: 'webhook_endpoints', column: 'previous_secret_sealed', aad },
] as const;

export function sealSecret(key: Buffer, endpointId: number, secret: string): Buffer {
  return seal(key, secret, aad(endpointId));
}

export interface SealedSecrets {
  id: number;
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: Date | null;
}

/**
 * The secrets an attempt at `now` signs with: the current one, then the previous one while its
 * grace lasts. Throws SecretBoxError when the current one does not open.
 */
export function signingSecrets(key: Buffer | readonly Buffer[], row: SealedSecrets, now: Date): string[] {
  const secrets = [open(key, row.secret_sealed, aad(row.id)).toString('utf8')];
  if (row.previous_secret_sealed && row.previous_secret_expires_at && row.previous_secret_expires_at > now) {
    // A previous secret that does not open is left out: rotating away from a secret that no
    // longer opens is how its owner recovers, and the new one alone signs meanwhile.
    try {
      secrets.push(open(key, row.previous_secret_sealed, aad(row.id)).toString('utf8'));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
    }
  }
  return secrets;
}
