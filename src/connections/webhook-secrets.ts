import { type Static, Type } from 'typebox';
import { type IntegrationConfig, type IntegrationKey, SESSION_SECRET_MAX, SESSION_SECRET_MIN } from '../config.js';
import { randomToken } from '../crypto/hmac.js';
import { open, seal } from '../crypto/secret-box.js';
import type { ManagedBy } from '../db/types.js';
import { errors } from '../http/errors.js';

/**
 * A connection's own webhook verification settings, named as INBOX_INTEGRATIONS names them for
 * its integration key (docs/connections.md). Write-only: answers say `hasWebhookSecrets`.
 */
const Secret = Type.String({ minLength: 1, maxLength: 4096 });
export const WebhookSecrets = Type.Object(
  {
    appSecret: Type.Optional(Type.With(Secret, { description: 'Messenger/Instagram: the Meta app secret (x-hub-signature-256)' })),
    webhookSecret: Type.Optional(
      Type.With(Secret, { description: 'the HMAC key or shared secret of whatsapp, aggregator, sms, e-mail and gateway keys' }),
    ),
    providerReportSecret: Type.Optional(Type.With(Secret, { description: 'whatsapp: the delivery-report shared secret (x-vendor-auth)' })),
    authToken: Type.Optional(Type.With(Secret, { description: 'sms.twilio: the auth token that signs X-Twilio-Signature' })),
    webhookVerifyToken: Type.Optional(
      Type.With(Secret, { description: 'Meta keys: the subscription verify token; generated when the connection is made' }),
    ),
  },
  {
    additionalProperties: false,
    title: 'WebhookSecrets',
    description: "write-only: never returned; the names of the integration's INBOX_INTEGRATIONS settings (docs/connections.md)",
  },
);
export type WebhookSecrets = Static<typeof WebhookSecrets>;
type SecretName = keyof WebhookSecrets;

/** Meta's keys: their subscription challenge compares a verify token, one per connection. */
export const META_KEYS: readonly string[] = ['whatsapp', 'social_one.native', 'social_two.native'];

/**
 * The settings each integration verifies its deliveries with. Absent keys take none: live chat
 * and AI never take webhooks, and a Telegram bot's secret is made by "Connect webhook".
 */
export const WEBHOOK_SECRET_NAMES: Partial<Record<IntegrationKey, readonly SecretName[]>> = {
  'social_one.native': ['appSecret', 'webhookVerifyToken'],
  'social_two.native': ['appSecret', 'webhookVerifyToken'],
  aggregator: ['webhookSecret'],
  whatsapp: ['webhookSecret', 'providerReportSecret', 'webhookVerifyToken'],
  whatsapp_session: ['webhookSecret'],
  sms: ['webhookSecret'],
  email: ['webhookSecret'],
  'sms.twilio': ['authToken'],
  'whatsapp_session.waha': ['webhookSecret'],
  'email.postmark': ['webhookSecret'],
  'email.mailgun': ['webhookSecret'],
};

/** Every setting that verifies a delivery: what a workspace's connection never borrows from the operator. */
const ALL_SECRET_NAMES = Object.keys(WebhookSecrets.properties) as SecretName[];

/**
 * 422 unless every name in `secrets` is one of `integrationKey`'s settings. Messages name
 * fields, never values.
 */
export function checkWebhookSecrets(integrationKey: string, secrets: WebhookSecrets): void {
  const names = WEBHOOK_SECRET_NAMES[integrationKey as IntegrationKey] ?? [];
  for (const name of Object.keys(secrets)) {
    if (!(names as string[]).includes(name)) {
      throw errors.validation(
        names.length === 0
          ? `webhookSecrets: ${integrationKey} connections take no webhook secrets`
          : `webhookSecrets.${name} is not a setting of ${integrationKey} (settings: ${names.join(', ')})`,
      );
    }
  }
  // The gateway's rule at start (config.ts), for a secret given here instead.
  const session = secrets.webhookSecret;
  if (
    integrationKey === 'whatsapp_session' &&
    session !== undefined &&
    (session.length < SESSION_SECRET_MIN || session.length > SESSION_SECRET_MAX)
  ) {
    throw errors.validation(
      `webhookSecrets.webhookSecret of whatsapp_session must be ${SESSION_SECRET_MIN} to ${SESSION_SECRET_MAX} characters`,
    );
  }
}

/** A fresh connection key, the public last segment of a connection's webhook URL. */
export function newConnectionKey(): string {
  return randomToken('ck_', 18);
}

/** A fresh Meta verify token. */
export function newVerifyToken(): string {
  return randomToken('vt_', 24);
}

/** `<INBOX_PUBLIC_URL>/webhooks/<integrationKey>/<connectionKey>`, or null where no webhook comes. */
export function webhookUrl(publicUrl: string, integrationKey: string, connectionKey: string): string | null {
  if (integrationKey === 'livechat' || integrationKey === 'ai' || integrationKey === 'email.imap') return null;
  return `${publicUrl}/webhooks/${integrationKey}/${connectionKey}`;
}

/** Binds sealed secrets to their row, and apart from its credentials (another AAD). */
const aad = (connectionId: number) => `connection-webhook:${connectionId}`;

/** Where webhook secrets are sealed and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_WEBHOOK_SECRETS = { table: 'connections', column: 'webhook_secrets_sealed', aad } as const;

/** The secrets to seal, without the verify token, which is kept readable in its own column. */
export function sealWebhookSecrets(key: Buffer, connectionId: number, secrets: WebhookSecrets): Buffer | null {
  const { webhookVerifyToken: _shown, ...sealed } = secrets;
  if (Object.keys(sealed).length === 0) return null;
  return seal(key, JSON.stringify(sealed), aad(connectionId));
}

/** Opens what sealWebhookSecrets made; throws a SecretBoxError when it does not open. */
export function openWebhookSecrets(key: Buffer | readonly Buffer[], connectionId: number, sealed: Buffer): WebhookSecrets {
  return JSON.parse(open(key, sealed, aad(connectionId)).toString('utf8')) as WebhookSecrets;
}

/**
 * What a delivery on a connection's own URL is verified with: its own secrets over the
 * integration's settings. A connection the operator made may fall back on INBOX_INTEGRATIONS
 * for what it leaves unset; one a workspace admin made never borrows the operator's secrets
 * (another tenant's deliveries would verify on its URL), only the non-secret settings.
 */
export function verificationSettings(integration: IntegrationConfig, managedBy: ManagedBy, own: WebhookSecrets | null): IntegrationConfig {
  const base: IntegrationConfig = { ...integration };
  if (managedBy === 'workspace') for (const name of ALL_SECRET_NAMES) delete base[name];
  return { ...base, ...own };
}
