import { type Static, Type } from 'typebox';
import type { SendCredentials } from '../channels/channel.js';
import type { IntegrationConfig, IntegrationKey } from '../config.js';
import { open, openingKeys, seal } from '../crypto/secret-box.js';
import type { ManagedBy } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { parseImapUrl } from '../net/imap.js';
import { findSealedCredentials } from './connections.queries.js';

/**
 * A connection's provider credentials: what its `send` needs to reply through the provider's
 * API as that account (docs/replies.md). Write-only over HTTP: answers say `hasCredentials`.
 */
export const ConnectionCredentials = Type.Object(
  {
    accessToken: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'bearer token / API key of the account' })),
    accountSid: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'sms: the account SID (basic-auth user)' })),
    smtpUrl: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'email: smtp:// or smtps:// URL, with user and password (email.imap: without them, see username and password)',
      }),
    ),
    imapUrl: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'email.imap: imaps:// (or imap://, STARTTLS) URL of the mailbox, host and port',
      }),
    ),
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 320, description: 'email.imap: the login of the IMAP and SMTP servers' }),
    ),
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'email.imap: the password (an app password) of the IMAP and SMTP servers',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'ConnectionCredentials',
    description: 'write-only: never returned; fields by integration (docs/connections.md)',
  },
);
export type ConnectionCredentials = Static<typeof ConnectionCredentials>;

/**
 * The fields each integration requires. Integrations missing here (`livechat`, `ai`) send
 * nothing through a provider and take no credentials. A connection cannot choose the host its
 * replies go to: a workspace admin could point it at an address inside the deployment's network
 * and read the answers back as errors. `apiBaseUrl` is the operator's, in INBOX_INTEGRATIONS,
 * until outbound requests get the private-address guard of the outbound webhooks.
 */
export const REQUIRED_CREDENTIALS: Partial<Record<IntegrationKey, readonly (keyof ConnectionCredentials)[]>> = {
  whatsapp: ['accessToken'],
  'social_one.native': ['accessToken'],
  'social_two.native': ['accessToken'],
  aggregator: ['accessToken'],
  whatsapp_session: ['accessToken'],
  sms: ['accountSid', 'accessToken'],
  email: ['smtpUrl'],
  'sms.twilio': ['accountSid', 'accessToken'],
  'whatsapp_session.waha': ['accessToken'],
  telegram: ['accessToken'],
  'email.postmark': ['smtpUrl'],
  'email.mailgun': ['smtpUrl'],
  'email.imap': ['imapUrl', 'smtpUrl', 'username', 'password'],
};

function hasProtocol(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/**
 * 422 unless `credentials` are exactly what `integrationKey` uses. A required field the
 * deployment supplies (`supplied`: deploymentFallback of the connection) may be left out, as
 * the reply sender fills it in; an empty object still names what is missing. Messages name
 * fields, never values: a value is a secret even when it is malformed.
 */
export function checkCredentials(
  integrationKey: string,
  credentials: ConnectionCredentials,
  supplied: Partial<Record<keyof ConnectionCredentials, string>> = {},
): void {
  const required = REQUIRED_CREDENTIALS[integrationKey as IntegrationKey];
  if (!required) throw errors.validation(`${integrationKey} connections take no credentials: they do not send through a provider's API`);
  const allowed: string[] = [...required];
  for (const field of Object.keys(credentials)) {
    if (!allowed.includes(field)) {
      throw errors.validation(`credentials.${field} is not used by ${integrationKey} connections (fields: ${allowed.join(', ')})`);
    }
  }
  const empty = Object.keys(credentials).length === 0;
  const missing = required.filter((f) => credentials[f] === undefined && (empty || supplied[f] === undefined));
  if (missing.length > 0)
    throw errors.validation(`${integrationKey} credentials need ${required.join(' and ')} (missing: ${missing.join(', ')})`);
  if (credentials.smtpUrl !== undefined && !hasProtocol(credentials.smtpUrl, ['smtp:', 'smtps:'])) {
    throw errors.validation('credentials.smtpUrl must be an smtp:// or smtps:// URL');
  }
  if (credentials.imapUrl !== undefined && !parseImapUrl(credentials.imapUrl)) {
    throw errors.validation('credentials.imapUrl must be an imaps:// or imap:// URL with a host');
  }
}

/** A send's error when the connection's sealed credentials do not open. */
export const CREDENTIALS_DO_NOT_OPEN =
  "the connection's stored credentials cannot be opened (INBOX_SECRET_KEY changed, or the row was altered or copied): set them again with PATCH /v1/connections/:id";

/** The associated data that binds sealed credentials to their connection's row. */
const aad = (connectionId: number) => `connection:${connectionId}`;

/** Where credentials are sealed and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_CREDENTIALS = { table: 'connections', column: 'credentials_sealed', aad } as const;

export function sealCredentials(key: Buffer, connectionId: number, credentials: ConnectionCredentials): Buffer {
  return seal(key, JSON.stringify(credentials), aad(connectionId));
}

/**
 * The credentials set on a connection, opened; null when it has none (or does not exist).
 * For the reply sender: the connection's values come first, and for a connection the operator
 * made `INBOX_INTEGRATIONS.<key>.accessToken` (and always its `apiBaseUrl`, or the provider's
 * default host) stay the fallback for whatever it leaves unset — merged by providerCredentials.
 * Throws (a SecretBoxError) when the stored value does not open: INBOX_SECRET_KEY changed, or the
 * row was altered or copied from another connection.
 */
export async function connectionCredentials(
  deps: Pick<Deps, 'db' | 'secretKey' | 'config'>,
  connectionId: number,
): Promise<Record<string, string> | null> {
  const sealed = await findSealedCredentials(deps.db, connectionId);
  if (!sealed) return null;
  return JSON.parse(open(openingKeys(deps), sealed, aad(connectionId)).toString('utf8')) as Record<string, string>;
}

/**
 * What a provider call authenticates with: the connection's own credentials first; the
 * integration's settings (INBOX_INTEGRATIONS.<key>) are the fallback of a deployment with one
 * provider account, and only for connections the operator made. A connection a workspace
 * admin made speaks on its own account or not at all: the operator's account is not a
 * tenant's to send through, nor to download with (docs/security.md). Twilio's auth token is
 * also its API password. The host is always the operator's. Sends, template syncs and media
 * downloads alike: the one place credentials are merged.
 */
export function providerCredentials(
  integration: IntegrationConfig,
  managedBy: ManagedBy,
  own: Record<string, string> | null,
): SendCredentials {
  return { ...deploymentFallback(integration, managedBy), ...own, apiBaseUrl: integration.apiBaseUrl };
}

/**
 * What INBOX_INTEGRATIONS.<key> gives a connection for the credentials it leaves unset: the
 * account of a deployment with one provider account (`accessToken`, else Twilio's `authToken`,
 * and `accountSid`), for connections the operator made only.
 */
export function deploymentFallback(
  integration: IntegrationConfig,
  managedBy: ManagedBy,
): Partial<Record<'accessToken' | 'accountSid', string>> {
  if (managedBy !== 'operator') return {};
  const fallback: Partial<Record<'accessToken' | 'accountSid', string>> = {};
  const accessToken = integration.accessToken ?? integration.authToken;
  if (accessToken !== undefined) fallback.accessToken = accessToken;
  if (integration.accountSid !== undefined) fallback.accountSid = integration.accountSid;
  return fallback;
}

/** A send's error when a workspace's connection has no credentials of its own. */
export const NO_CREDENTIALS = 'connection has no credentials';

/**
 * Whether a connection cannot call its provider at all: one a workspace made, of an
 * integration that takes credentials, without any of its own. Its sends fail at once (no
 * retry can help) rather than reach the provider unauthenticated.
 */
export function lacksCredentials(integrationKey: string, managedBy: ManagedBy, own: Record<string, string> | null): boolean {
  return managedBy === 'workspace' && own === null && REQUIRED_CREDENTIALS[integrationKey as IntegrationKey] !== undefined;
}
