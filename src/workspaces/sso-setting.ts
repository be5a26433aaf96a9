import { type Static, Type } from 'typebox';
import { errors } from '../http/errors.js';
import { Nullable, StringEnum } from '../http/schemas.js';

/** What seals the `sso` setting's client secret to its workspace's row (INBOX_SECRET_KEY). */
export const ssoSecretAad = (workspaceId: number) => `workspace-sso:${workspaceId}`;

/** Where the client secrets are sealed and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_SSO_SECRETS = { table: 'workspaces', column: 'sso_client_secret', aad: ssoSecretAad } as const;

/** A role a person signing in for the first time may get: never `operator` (only the platform operator grants it). */
const SSO_ROLES = ['admin', 'agent'] as const;

const Domain = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.-]+$' });
const fields = {
  issuer: Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'the OpenID issuer (its discovery document is `<issuer>/.well-known/openid-configuration`); https',
  }),
  clientId: Type.String({ minLength: 1, maxLength: 500 }),
  allowedDomains: Type.Array(Domain, {
    minItems: 1,
    maxItems: 50,
    description: 'e-mail domains that may sign in this way; a person not yet a user of an allowed domain is created',
  }),
  defaultRoles: Type.Array(StringEnum(SSO_ROLES), { maxItems: 2, description: 'the roles of a user created at first sign-in' }),
  enforce: Type.Boolean({
    description:
      'password sign-in of the workspace’s users is refused (401 `sso_required`), except admins with two-factor sign-in and platform operators',
  }),
};

/** `sso` as the settings answer it: the client secret is write-only and never answered. */
export const SsoSetting = Type.With(Nullable(Type.Object(fields)), {
  description: 'single sign-on with OpenID Connect; null = off (docs/security.md)',
});
export type SsoSettingValue = Static<typeof SsoSetting>;

/** `sso` as `PATCH /v1/workspace` takes it: the whole setting, or null to turn it off. */
export const SsoSettingPatch = Type.With(
  Nullable(
    Type.Object(
      {
        ...fields,
        clientSecret: Type.Optional(
          Type.String({ minLength: 1, maxLength: 1000, description: 'write-only, kept sealed; leave out to keep the one set' }),
        ),
        defaultRoles: Type.Optional(fields.defaultRoles),
        enforce: Type.Optional(fields.enforce),
      },
      { additionalProperties: false },
    ),
  ),
  { description: 'single sign-on with OpenID Connect; null = off (docs/security.md)' },
);
export type SsoSettingInput = NonNullable<Static<typeof SsoSettingPatch>>;

/**
 * The setting as stored, after the rules the schema cannot say: the issuer is an https URL
 * without query or fragment (http only with INBOX_ALLOW_PRIVATE_SSO), domains are lower case
 * and unique, and a secret is there (given now, or set before).
 */
export function checkSsoSetting(input: SsoSettingInput, options: { allowPrivate: boolean; secretStored: boolean }) {
  let issuer: URL;
  try {
    issuer = new URL(input.issuer);
  } catch {
    throw errors.validation('sso.issuer: not a URL');
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(issuer.protocol))
    throw errors.validation(
      options.allowPrivate ? 'sso.issuer: must be an http(s) URL' : 'sso.issuer: must be https (INBOX_ALLOW_PRIVATE_SSO allows http)',
    );
  if (issuer.search || issuer.hash || issuer.username || issuer.password)
    throw errors.validation('sso.issuer: an issuer has no query, fragment or credentials');
  if (input.clientSecret === undefined && !options.secretStored) throw errors.validation('sso.clientSecret: required');
  const value: NonNullable<SsoSettingValue> = {
    // The issuer is compared with the `iss` of the discovery document and ID tokens as given.
    issuer: input.issuer,
    clientId: input.clientId,
    allowedDomains: [...new Set(input.allowedDomains.map((d) => d.toLowerCase().replace(/\.$/, '')))],
    defaultRoles: [...new Set(input.defaultRoles ?? ['agent'])] as (typeof SSO_ROLES)[number][],
    enforce: input.enforce ?? false,
  };
  return value;
}
