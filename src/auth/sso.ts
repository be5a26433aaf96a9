import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { personTrail, recordAudit, systemTrail, type Trail } from '../audit/audit.js';
import { safeEqual, sha256Hex } from '../crypto/hmac.js';
import { open, openingKeys, SecretBoxError } from '../crypto/secret-box.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { describeRefusal, guardedLookup, ipLiteral, RefusedAddressError, refusedRange, systemResolve } from '../net/address-guard.js';
import { isSingleMailbox } from '../text/mailbox.js';
import { truncate } from '../text/truncate.js';
import { findUserByEmail } from '../users/users.queries.js';
import { createUser, routeToNewUser } from '../users/users.service.js';
import type { SsoSettingValue } from '../workspaces/sso-setting.js';
import { ssoSecretAad } from '../workspaces/sso-setting.js';
import { workspaceSettings } from '../workspaces/workspace-settings.js';
import { issueAuthCode } from './sessions.service.js';
import { findSsoClientSecret, insertSsoLogin, takeSsoLogin } from './sso.queries.js';
import { twoFactorOn } from './two-factor.service.js';

/** A sign-in has 10 minutes between its start and the identity provider's callback. */
export const SSO_LOGIN_SECONDS = 10 * 60;
/** Every call to the identity provider: connecting, the answer's headers, its body. */
const PROVIDER_TIMEOUT_MS = 10_000;

export const ssoCallbackPath = '/auth/sso/callback';
export const ssoRedirectUri = (publicUrl: string) => `${publicUrl.replace(/\/$/, '')}${ssoCallbackPath}`;

type Sso = NonNullable<SsoSettingValue>;

let agents: { private: Agent; public: Agent } | undefined;
/** The address guard of outbound webhooks, for the identity provider's addresses (lifted by INBOX_ALLOW_PRIVATE_SSO). */
function agentFor(deps: Deps): Agent {
  const resolve = deps.resolveHost ?? systemResolve;
  const make = (allowPrivate: boolean) =>
    new Agent({
      connect: { lookup: guardedLookup(resolve, allowPrivate), timeout: PROVIDER_TIMEOUT_MS },
      headersTimeout: PROVIDER_TIMEOUT_MS,
      bodyTimeout: PROVIDER_TIMEOUT_MS,
    });
  // The resolver is the deployment's (tests name their own): agents are per resolver then.
  if (deps.resolveHost) return make(deps.config.allowPrivateSso);
  agents ??= { private: make(true), public: make(false) };
  return deps.config.allowPrivateSso ? agents.private : agents.public;
}

/**
 * openid-client's fetch, through the guard: a name is checked inside the socket's lookup, an
 * address literal (which needs no lookup) here; redirects are not followed.
 */
function guardedFetch(deps: Deps): oidc.CustomFetch {
  const dispatcher = agentFor(deps);
  return (async (url: string, options: oidc.CustomFetchOptions) => {
    const literal = ipLiteral(new URL(url));
    const range = literal && !deps.config.allowPrivateSso ? refusedRange(literal) : undefined;
    if (literal && range) throw new RefusedAddressError(`refused: ${describeRefusal(literal, literal, range)}`);
    return undiciFetch(url, { ...(options as object), dispatcher, redirect: 'manual' } as Parameters<typeof undiciFetch>[1]);
  }) as unknown as oidc.CustomFetch;
}

/** Why a call to the identity provider failed, in words safe for the person signing in. */
function providerWords(err: unknown): string {
  if (err instanceof RefusedAddressError) return err.message;
  if (err instanceof oidc.AuthorizationResponseError) return `the identity provider answered ${err.error}`;
  if (err instanceof oidc.ResponseBodyError) return `the identity provider answered ${err.error}`;
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof RefusedAddressError) return cause.message;
  // openid-client wraps the check that failed, whose message names the claim (nonce, aud, iss…),
  // never its value.
  const message = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  return message.slice(0, 200);
}

/** What a sign-in meets when the workspace's sealed client secret does not open. */
export const SSO_SECRET_DOES_NOT_OPEN =
  "the workspace's single sign-on client secret cannot be opened (INBOX_SECRET_KEY changed, or the row was altered or copied): an admin sets sso.clientSecret again with PATCH /v1/workspace";

async function ssoSetting(deps: Deps, workspaceId: number): Promise<{ sso: Sso; secret: string }> {
  const settings = await workspaceSettings(deps.db, workspaceId).catch(() => null);
  const sealed = settings?.sso ? await findSsoClientSecret(deps.db, workspaceId) : null;
  if (!settings?.sso || !sealed) throw errors.notFound('single sign-on of this workspace');
  try {
    return { sso: settings.sso, secret: open(openingKeys(deps), sealed, ssoSecretAad(workspaceId)).toString('utf8') };
  } catch (err) {
    // A secret that does not open fails this sign-in, clearly, never more (docs/security.md).
    if (err instanceof SecretBoxError) throw errors.conflict(SSO_SECRET_DOES_NOT_OPEN);
    throw err;
  }
}

/** The issuer's discovery document and keys, read now: an identity provider changes its keys. */
async function discover(deps: Deps, sso: Sso, secret: string): Promise<oidc.Configuration> {
  try {
    return await oidc.discovery(new URL(sso.issuer), sso.clientId, secret, oidc.ClientSecretBasic(secret), {
      [oidc.customFetch]: guardedFetch(deps),
      // openid-client trusts the token endpoint's TLS and checks no ID token signature unless
      // told: the ID token is checked against the issuer's keys whatever carried it.
      execute: [oidc.enableNonRepudiationChecks, ...(new URL(sso.issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [])],
    });
  } catch (err) {
    throw errors.providerError(`the identity provider's discovery document could not be read: ${providerWords(err)}`);
  }
}

/**
 * `GET /auth/sso/:workspaceId/start`: where to send the browser (the issuer's authorization
 * endpoint: code flow with PKCE, a fresh `state` and `nonce`) and the state, which the browser
 * keeps in a cookie so that only the browser that started a sign-in can finish it.
 */
export async function startSsoLogin(deps: Deps, workspaceId: number): Promise<{ url: string; state: string }> {
  const { sso, secret } = await ssoSetting(deps, workspaceId);
  const config = await discover(deps, sso, secret);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const now = deps.now();
  await insertSsoLogin(
    deps.db,
    { stateHash: sha256Hex(state), workspaceId, nonce, codeVerifier, expiresAt: new Date(now.getTime() + SSO_LOGIN_SECONDS * 1000) },
    now,
  );
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: ssoRedirectUri(deps.config.publicUrl),
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, state };
}

interface Person {
  email: string;
  emailVerified: boolean;
  name: string | undefined;
}

/** E-mail and name from the ID token, else (a provider that keeps them out of it) from userinfo. */
async function personOf(config: oidc.Configuration, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers) {
  const claims = tokens.claims();
  if (!claims) throw errors.unauthorized('the identity provider sent no ID token');
  let source: Record<string, unknown> = claims;
  if (typeof claims.email !== 'string') source = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  const person: Person = {
    email: typeof source.email === 'string' ? source.email.trim().toLowerCase() : '',
    emailVerified: source.email_verified === true,
    name: typeof source.name === 'string' && source.name.trim() ? truncate(source.name.trim(), 200) : undefined,
  };
  return person;
}

/**
 * `GET /auth/sso/callback`: checks the state against the browser's cookie and spends it, then
 * lets openid-client check the rest (the code exchanged with the PKCE verifier; the ID token's
 * signature, issuer, audience, expiry and nonce); finds the user by verified e-mail in an
 * allowed domain, or creates one with `defaultRoles`. Answers a one-time auth code for the
 * console to exchange. Every refusal after the state names a workspace is audited.
 */
export async function finishSsoLogin(
  deps: Deps,
  query: Record<string, string>,
  cookieState: string | undefined,
  ip: string,
): Promise<string> {
  const state = query.state;
  if (!state || !cookieState || !safeEqual(state, cookieState))
    throw errors.unauthorized('this sign-in was not started in this browser (state mismatch): start it again');
  const login = await takeSsoLogin(deps.db, sha256Hex(state), deps.now());
  if (!login) throw errors.unauthorized('this sign-in is unknown, used or expired: start it again');
  const workspaceId = login.workspace_id;
  const refuse = async (trail: Trail, reason: string, error: Error): Promise<never> => {
    await recordAudit(deps.db, trail, 'sign_in.sso_failed', null, { reason: { old: null, new: reason } });
    throw error;
  };
  const anonymous = { ...systemTrail(workspaceId), ip };
  const { sso, secret } = await ssoSetting(deps, workspaceId);
  const config = await discover(deps, sso, secret);
  const callbackUrl = new URL(ssoRedirectUri(deps.config.publicUrl));
  for (const [k, v] of Object.entries(query)) callbackUrl.searchParams.set(k, v);
  let person: Person;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: login.code_verifier,
      expectedState: state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    person = await personOf(config, tokens);
  } catch (err) {
    const words = providerWords(err);
    return refuse(anonymous, words, errors.unauthorized(`the identity provider's answer was refused: ${words}`));
  }
  if (!person.email || !person.emailVerified)
    return refuse(
      anonymous,
      'e-mail not verified',
      errors.forbidden('the identity provider did not vouch for an e-mail address (email_verified)'),
    );
  // A list or a line break would end in an allowed domain and become the user's mail address.
  if (!isSingleMailbox(person.email))
    return refuse(anonymous, 'e-mail not one address', errors.forbidden('the identity provider’s e-mail claim is not one e-mail address'));
  const domain = person.email.slice(person.email.lastIndexOf('@') + 1);
  if (!sso.allowedDomains.includes(domain))
    return refuse(
      anonymous,
      `domain ${domain} not allowed`,
      errors.forbidden(`e-mail addresses of ${domain} do not sign in to this workspace`),
    );
  const found = await findUserByEmail(deps.db, person.email);
  if (found && found.workspace_id !== workspaceId)
    return refuse(anonymous, 'user of another workspace', errors.forbidden('this e-mail address is a user of another workspace'));
  // The workspace admin chooses the issuer and the allowed domains, so the provider may claim
  // any address of them: a platform operator signed in that way would hand a workspace admin
  // every tenant. Operators sign in with their password (docs/security.md).
  if (found?.roles.includes('operator'))
    return refuse(
      personTrail(found, ip),
      'platform operator',
      errors.forbidden('a platform operator signs in with their password, never through a workspace’s single sign-on'),
    );
  if (found && !found.active)
    return refuse(
      personTrail(found, ip),
      'user deactivated',
      errors.forbidden('this user is deactivated (or has not accepted their invite)'),
    );
  return deps.db.transaction().execute(async (trx) => {
    let userId = found?.id;
    if (userId === undefined) {
      const created = await createUser(trx, workspaceId, {
        name: person.name ?? person.email.slice(0, person.email.indexOf('@')),
        email: person.email,
        // Never told to anyone: the user signs in through the identity provider (or a reset link).
        password: randomBytes(32).toString('base64url'),
        roles: sso.defaultRoles,
      });
      userId = created.id;
      await routeToNewUser(deps, trx, workspaceId);
      await recordAudit(
        trx,
        { ...systemTrail(workspaceId), ip },
        'user.created',
        { type: 'user', id: userId },
        {
          email: { old: null, new: person.email },
          roles: { old: null, new: sso.defaultRoles },
          via: { old: null, new: 'sso' },
        },
      );
    }
    await recordAudit(trx, personTrail({ id: userId, workspace_id: workspaceId }, ip), 'sign_in.sso', { type: 'user', id: userId });
    // No session yet: the code is what starts one, so only a user-wide revocation spends it.
    return issueAuthCode(trx, { userId, sessionId: null }, false, deps.now());
  });
}

/**
 * `sso.enforce`: a password login of the workspace's users is refused (401 `sso_required`,
 * audited as a failed sign-in) once the password proved right, so the answer tells nothing
 * to someone guessing. Admins with two-factor sign-in keep the password: the way back in
 * when the identity provider is down or misconfigured. So do platform operators, whom no
 * workspace setting locks out.
 */
export async function refusePasswordWhereSsoOnly(deps: Deps, user: Parameters<typeof twoFactorOn>[0], trail: Trail): Promise<void> {
  // A platform operator is not the workspace's to lock out (nor to sign in: see finishSsoLogin).
  if (user.roles.includes('operator')) return;
  const { sso } = await workspaceSettings(deps.db, user.workspace_id);
  if (!sso?.enforce || (user.roles.includes('admin') && twoFactorOn(user))) return;
  await recordAudit(deps.db, trail, 'sign_in.failed', { type: 'user', id: user.id }, { reason: { old: null, new: 'sso_required' } });
  throw errors.ssoRequired(user.workspace_id);
}
