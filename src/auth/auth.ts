import type {} from '@fastify/jwt';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { findActiveApiKeyByHash } from '../api-keys/api-keys.queries.js';
import { safeEqual, sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { recordCredentialUse } from './last-used.queries.js';
import { findActivePat, findLiveSession } from './sessions.queries.js';

/** A caller of one workspace. */
interface TenantBase {
  workspaceId: number;
  appId: string;
  scopes: string[];
}

/** A signed-in user: a JWT whose `jti` names a live server-side session. */
export interface UserAuth extends TenantBase {
  kind: 'user';
  userId: number;
  sessionId: string;
  roles: string[];
  /** When the token stops working: the JWT's `exp` or its session's end, whichever is first. */
  expiresAt: Date;
  /** The workspace requires two-factor sign-in and this user has not turned it on. */
  twoFactorMissing: boolean;
}

/** A user's personal-access token, accepted only where a route allows one. */
export interface PatAuth extends TenantBase {
  kind: 'pat';
  userId: number;
  patId: number;
  roles: string[];
  expiresAt: Date;
  twoFactorMissing: boolean;
}

/** A workspace's API key. */
export interface ApiKeyAuth extends TenantBase {
  kind: 'api_key';
  apiKeyId: number;
}

/** The engage admin key: the platform operator, of no workspace. */
export interface AdminKeyAuth {
  kind: 'admin_key';
}

/** Who the caller is; set on `request.auth` by the guards below, the one place that decides. */
export type Auth = UserAuth | PatAuth | ApiKeyAuth | AdminKeyAuth;
export type TenantAuth = UserAuth | PatAuth | ApiKeyAuth;
/** A person: a user signed in with a JWT or a personal-access token. */
export type PersonAuth = UserAuth | PatAuth;

declare module 'fastify' {
  interface FastifyRequest {
    auth: Auth | null;
  }
}

/**
 * Scopes, each including the one before: `read` (GET/HEAD of tenant routes), `write` (every
 * other method), `admin` (routes that say so: API keys, dead letters). An API key holds what
 * it was created with; a workspace user (JWT, or a PAT where one is accepted) holds `read`
 * and `write`, plus `admin` with role `admin`.
 */
export type Scope = 'read' | 'write' | 'admin';
const SCOPE_RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3 };

function userScopes(roles: string[]): Scope[] {
  return roles.includes('admin') ? ['read', 'write', 'admin'] : ['read', 'write'];
}

/** Reads `X-API-KEY` (Node lowercases header names, so any casing the client sends matches). */
function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = headerValue(request, 'authorization');
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * How fresh a key's or a token's `lastUsedAt` is kept: a use is written when the last one
 * written is older. Written on every request, one key's row was a lock every concurrent request
 * of its client queued on, and a commit of its own per request.
 */
export const LAST_USED_PRECISION_MS = 60_000;

/** Whether a use at `now` is news for a credential last recorded at `lastUsedAt`; the time it must be older than. */
function staleSince(lastUsedAt: Date | null, now: Date): Date | undefined {
  const since = new Date(now.getTime() - LAST_USED_PRECISION_MS);
  return lastUsedAt === null || lastUsedAt.getTime() < since.getTime() ? since : undefined;
}

export async function resolveApiKey(deps: Deps, key: string): Promise<ApiKeyAuth> {
  const row = await findActiveApiKeyByHash(deps.db, sha256Hex(key));
  if (!row) throw errors.invalidApiKey();
  // Best effort, never on the caller's time: last-used is informational, to the minute.
  const now = deps.now();
  const since = staleSince(row.last_used_at, now);
  if (since)
    recordCredentialUse(deps.db, 'api_keys', row.id, now, since).catch((err) => deps.log.warn({ err }, 'could not record API key use'));
  return { kind: 'api_key', workspaceId: row.workspace_id, appId: row.app_id, apiKeyId: row.id, scopes: row.scopes };
}

export const PAT_PREFIX = 'inbox_pat_';

export interface ResolveOptions {
  /** Personal-access tokens are accepted only where a route says so (docs/auth.md: a few routes). */
  allowPat?: boolean;
  /**
   * The route is one a user must reach before turning two-factor sign-in on where the workspace
   * requires it (set it up, enable it, who am I, refresh, logout); every other refuses them (403).
   */
  before2fa?: boolean;
}

/**
 * A bearer token is a JWT whose `jti` names a live server-side session (so a logged-out,
 * refreshed-away or revoked token is refused before it expires), or, where allowed, a
 * personal-access token. Null when it is neither.
 */
async function resolveBearer(deps: Deps, request: FastifyRequest, token: string, options: ResolveOptions): Promise<PersonAuth | null> {
  const now = deps.now();
  if (token.startsWith(PAT_PREFIX)) {
    if (!options.allowPat) return null;
    const pat = await findActivePat(deps.db, sha256Hex(token), now);
    if (!pat) return null;
    const since = staleSince(pat.last_used_at, now);
    if (since)
      recordCredentialUse(deps.db, 'personal_access_tokens', pat.id, now, since).catch((err) =>
        deps.log.warn({ err }, 'could not record token use'),
      );
    return {
      kind: 'pat',
      workspaceId: pat.workspace_id,
      appId: pat.app_id,
      userId: pat.user_id,
      patId: pat.id,
      expiresAt: pat.expires_at,
      scopes: userScopes(pat.roles),
      roles: pat.roles,
      twoFactorMissing: pat.two_factor_missing,
    };
  }
  let claims: { sub?: unknown; jti?: unknown; exp?: unknown; use?: unknown };
  try {
    claims = request.server.jwt.verify(token);
  } catch {
    return null; // bad signature, wrong algorithm, expired, malformed
  }
  // Access tokens carry no `use`; the refresh cookie's token (`use: "refresh"`) is never a bearer.
  if (claims.use !== undefined) return null;
  if (typeof claims.jti !== 'string' || !isUuid(claims.jti)) return null;
  const session = await findLiveSession(deps.db, claims.jti, now);
  if (!session || String(session.user_id) !== String(claims.sub)) return null;
  const exp = typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : session.expires_at;
  return {
    kind: 'user',
    workspaceId: session.workspace_id,
    appId: session.app_id,
    userId: session.user_id,
    sessionId: session.session_id,
    expiresAt: exp.getTime() < session.expires_at.getTime() ? exp : session.expires_at,
    scopes: userScopes(session.roles),
    roles: session.roles,
    twoFactorMissing: session.two_factor_missing,
  };
}

/**
 * Resolves the caller from the request's credentials: `X-API-KEY` first, then a bearer
 * token. Returns null when no credential is present; throws 401 when one is present but bad.
 */
export async function resolveAuth(deps: Deps, request: FastifyRequest, options: ResolveOptions = {}): Promise<TenantAuth | null> {
  const apiKey = headerValue(request, 'x-api-key');
  if (apiKey !== undefined) return resolveApiKey(deps, apiKey);
  const token = bearerToken(request);
  if (token !== undefined) {
    const auth = await resolveBearer(deps, request, token, options);
    if (!auth) throw errors.unauthorized('invalid or expired token');
    if (auth.twoFactorMissing && !options.before2fa) throw errors.twoFactorRequired();
    return auth;
  }
  if (headerValue(request, 'authorization') !== undefined) throw errors.unauthorized('unsupported authorization scheme');
  return null;
}

/** Resolves a bare token (the realtime socket's `?token=`): a JWT or a personal-access token. */
export async function resolveToken(deps: Deps, request: FastifyRequest, token: string): Promise<PersonAuth | null> {
  const auth = await resolveBearer(deps, request, token, { allowPat: true });
  if (auth?.twoFactorMissing) throw errors.twoFactorRequired();
  return auth;
}

export function hasScope(auth: TenantAuth, scope: Scope): boolean {
  return auth.scopes.some((s) => (SCOPE_RANK[s as Scope] ?? 0) >= SCOPE_RANK[scope]);
}

/** Whether a tenant caller holds the `admin` scope (a JWT admin, an admin API key): what admins alone are shown. */
export function isAdmin(auth: TenantAuth): boolean {
  return hasScope(auth, 'admin');
}

/**
 * A tenant caller (user, API key; PAT where allowed) is required and must hold the route's
 * scope: `scope` when given (admin routes), else `read` for GET/HEAD and `write` for any
 * other method. Use it as a preValidation hook so a caller without the scope learns
 * nothing from the body's validation.
 */
export function requireAuth(deps: Deps, options: { scope?: Scope; kinds?: TenantAuth['kind'][] } & ResolveOptions = {}) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const auth = await resolveAuth(deps, request, options);
    if (!auth) throw errors.unauthorized();
    if (options.kinds && !options.kinds.includes(auth.kind)) throw errors.forbidden(`requires a ${options.kinds.join(' or ')} credential`);
    const scope = options.scope ?? (request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write');
    if (!hasScope(auth, scope)) throw errors.forbidden(`requires the ${scope} scope`);
    request.auth = auth;
  };
}

/**
 * preValidation: credentials are optional. Anonymous requests pass; a valid credential resolves
 * the caller; a credential that is present but bad is refused (401), never silently ignored.
 */
export function optionalAuth(deps: Deps, options: ResolveOptions = {}) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    request.auth = await resolveAuth(deps, request, options);
  };
}

const ADMIN_AUTH: AdminKeyAuth = { kind: 'admin_key' };

/**
 * The engage admin key (docs/auth.md): `X-Service-Admin-API-Key`, falling back to `X-API-KEY`,
 * then a bearer token; the first present is compared in constant time with the configured key.
 */
function adminKeyMatches(deps: Deps, request: FastifyRequest): boolean | 'absent' {
  const presented = headerValue(request, 'x-service-admin-api-key') ?? headerValue(request, 'x-api-key') ?? bearerToken(request);
  if (presented === undefined) return 'absent';
  const configured = deps.config.adminApiKey;
  return configured !== undefined && safeEqual(presented, configured);
}

/** preValidation: the engage admin key is required. */
export function requireAdminKey(deps: Deps) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const match = adminKeyMatches(deps, request);
    if (match === 'absent') throw errors.unauthorized('admin key required');
    if (!match) throw errors.unauthorized('invalid admin key');
    request.auth = ADMIN_AUTH;
  };
}

/** preValidation: platform staff: the admin key, or a signed-in user (JWT) with role `operator`. */
export function requireOperator(deps: Deps) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    if (headerValue(request, 'x-service-admin-api-key') !== undefined) {
      if (adminKeyMatches(deps, request) !== true) throw errors.unauthorized('invalid admin key');
      request.auth = ADMIN_AUTH;
      return;
    }
    // A bearer or X-API-KEY may be the admin key itself or a user's credential.
    if (adminKeyMatches(deps, request) === true) {
      request.auth = ADMIN_AUTH;
      return;
    }
    // Never a personal-access token: a long-lived token made for scripts must not carry the
    // operator's reach over every tenant (it is refused like any unknown bearer, 401).
    const auth = await resolveAuth(deps, request);
    if (!auth) throw errors.unauthorized();
    if (auth.kind !== 'user' || !auth.roles.includes('operator')) {
      throw errors.forbidden('requires the operator role');
    }
    request.auth = auth;
  };
}

/** The tenant caller of a route guarded by `requireAuth`. */
export function tenantOf(request: FastifyRequest): TenantAuth {
  const auth = request.auth;
  if (!auth || auth.kind === 'admin_key') throw errors.unauthorized();
  return auth;
}

/** The person (JWT or personal-access token) behind a route that accepts only people. */
export function personOf(request: FastifyRequest): PersonAuth {
  const auth = request.auth;
  if (!auth || (auth.kind !== 'user' && auth.kind !== 'pat')) throw errors.unauthorized();
  return auth;
}

/** The signed-in session behind a route that accepts only a JWT. */
export function userOf(request: FastifyRequest): UserAuth {
  const auth = request.auth;
  if (auth?.kind !== 'user') throw errors.unauthorized();
  return auth;
}
