import { randomBytes } from 'node:crypto';
import { hmacSha256 } from '../crypto/hmac.js';
import type { EndpointScheme } from '../db/types.js';

/**
 * Signatures of outbound webhooks (docs/outbound-webhooks.md "Verifying a delivery"). Secrets are
 * `whsec_` + base64 of 32 random bytes, so one secret serves both schemes: the `service`
 * scheme keys its HMAC with the secret string as it is shown, the Standard Webhooks scheme
 * with the bytes after the prefix, as that specification says.
 */

const SECRET_PREFIX = 'whsec_';
const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * A secret a customer brings (e.g. moving from another sender): `whsec_` + base64 of 24–64
 * bytes, in its one canonical form (padded, no stray bits). Node decodes a malformed tail
 * silently, but WebCrypto's `atob` (the typed client's verifyWebhook) and strict decoders
 * (Python's and Go's Standard Webhooks libraries) refuse it: a receiver could then never
 * verify a `standard` delivery signed with it.
 */
export function isValidSecret(secret: string): boolean {
  if (!SECRET_PATTERN.test(secret)) return false;
  const encoded = secret.slice(SECRET_PREFIX.length);
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.length >= 24 && bytes.length <= 64 && bytes.toString('base64') === encoded;
}

export interface SignedRequest {
  scheme: EndpointScheme;
  /** The current secret first, then a previous one still in its grace period. */
  secrets: string[];
  deliveryId: number;
  eventType: string;
  /** Unix seconds, fresh for every attempt. */
  timestamp: number;
  body: string;
}

/** Every header of one attempt: signature, timestamp, ids, content type, user agent. */
export function webhookHeaders(req: SignedRequest, userAgent: string): Record<string, string> {
  const common = { 'content-type': 'application/json', 'user-agent': userAgent };
  if (req.scheme === 'standard') {
    const id = String(req.deliveryId);
    const signed = `${id}.${req.timestamp}.${req.body}`;
    return {
      ...common,
      'webhook-id': id,
      'webhook-timestamp': String(req.timestamp),
      'webhook-signature': req.secrets
        .map((s) => `v1,${hmacSha256(Buffer.from(s.slice(SECRET_PREFIX.length), 'base64'), signed).toString('base64')}`)
        .join(' '),
    };
  }
  const signed = `${req.timestamp}.${req.body}`;
  const sign = (secret: string) => `sha256=${hmacSha256(secret, signed).toString('hex')}`;
  const [current, previous] = req.secrets;
  // `x-service-signature` is always exactly one `sha256=<hex>` (a receiver may compare the
  // whole header); during a rotation's grace the old secret's signature travels beside it in
  // its own header, so receivers still holding the old secret keep verifying. See
  // docs/outbound-webhooks.md "Rotating the secret".
  return {
    ...common,
    'x-service-signature': sign(current!),
    ...(previous !== undefined ? { 'x-service-signature-previous': sign(previous) } : {}),
    'x-service-timestamp': String(req.timestamp),
    'x-service-event': req.eventType,
    'x-service-delivery': String(req.deliveryId),
  };
}
