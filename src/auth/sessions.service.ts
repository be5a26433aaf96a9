import { randomBytes, randomUUID } from 'node:crypto';
import type { JWT } from '@fastify/jwt';
import argon2 from 'argon2';
import type { Selectable, Transaction } from 'kysely';
import { recordAudit, type Trail } from '../audit/audit.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { DB, UsersTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { clientAddressKey } from '../http/client-address.js';
import { errors } from '../http/errors.js';
import { isUuid } from '../http/ids.js';
import { publishEvent } from '../realtime/publish.js';
import { userResource } from '../users/users.resources.js';
import {
  countFailedLogins,
  forgetLoginAttempt,
  insertAuthCode,
  insertSession,
  recordLoginAttempt,
  revokeOtherSessions,
  revokePats,
  revokeSessions,
  spendAuthCodes,
} from './sessions.queries.js';

/** Token lifetimes: a normal login lasts 12 hours, `remember: true` 30 days. */
export const SESSION_SECONDS = { normal: 12 * 3600, remember: 30 * 24 * 3600 } as const;
/** Auth codes live 60 seconds and work once. */
export const AUTH_CODE_SECONDS = 60;
/** Failed logins counted over 15 minutes: 5 per e-mail, 50 per client address. */
export const LOGIN_WINDOW_SECONDS = 15 * 60;
export const LOGIN_LIMIT_PER_EMAIL = 5;
export const LOGIN_LIMIT_PER_IP = 50;

type User = Selectable<UsersTable>;

/**
 * Creates a one-time auth code for a user; only its SHA-256 is stored. A code minted in a
 * session (`sessionId`) dies with it: once that session ends, the code starts no other one.
 */
export async function issueAuthCode(
  db: Executor,
  owner: { userId: number; sessionId: string | null },
  remember: boolean,
  now: Date,
): Promise<string> {
  const code = randomBytes(24).toString('base64url');
  const expiresAt = new Date(now.getTime() + AUTH_CODE_SECONDS * 1000);
  await insertAuthCode(db, { codeHash: sha256Hex(code), ...owner, remember, expiresAt });
  return code;
}

/** What a session is for the refresh cookie: which one, until when, and whether it is remembered. */
export interface SessionInfo {
  id: string;
  userId: number;
  remember: boolean;
  expiresAt: Date;
}

/** The access token of a session: the JWT's `jti` is the session id, so ending the session ends the token. */
function signAccessToken(jwt: JWT, user: User, session: SessionInfo, now: Date): string {
  return jwt.sign({
    sub: String(user.id),
    jti: session.id,
    wid: user.workspace_id,
    iat: Math.floor(now.getTime() / 1000),
    exp: Math.floor(session.expiresAt.getTime() / 1000),
  });
}

function loginAnswer(jwt: JWT, user: User, session: SessionInfo, authCode: string, now: Date) {
  return {
    data: userResource(user),
    access_token: signAccessToken(jwt, user, session, now),
    token_expiry: Math.floor(session.expiresAt.getTime() / 1000),
    auth_code: authCode,
  };
}

/**
 * Starts a server-side session and answers with the login response (docs/auth.md):
 * `{ data: UserResource, access_token, token_expiry, auth_code }`, beside the session it
 * started. Given a transaction, the session starts in it (a refresh makes it depend on the
 * old session's end); otherwise in one of its own.
 */
export async function startSession(deps: Deps, jwt: JWT, user: User, remember: boolean, trx?: Transaction<DB>) {
  const now = deps.now();
  const seconds = remember ? SESSION_SECONDS.remember : SESSION_SECONDS.normal;
  const session: SessionInfo = { id: randomUUID(), userId: user.id, remember, expiresAt: new Date(now.getTime() + seconds * 1000) };
  const insert = async (db: Executor) => {
    await insertSession(db, session);
    return issueAuthCode(db, { userId: user.id, sessionId: session.id }, remember, now);
  };
  const authCode = trx ? await insert(trx) : await deps.db.transaction().execute(insert);
  return { answer: loginAnswer(jwt, user, session, authCode, now), session };
}

/**
 * Replaces a session by a new one, in one transaction. The old session is ended by a
 * conditional update (only while it is still live); the row lock makes a concurrent refresh
 * of the same token wait and then find it ended, so it gets null (a 401) and no session:
 * one token never turns into two.
 */
export async function refreshSession(deps: Deps, jwt: JWT, user: User, sessionId: string, remember: boolean) {
  return deps.db.transaction().execute(async (trx) => {
    const ended = await endSessions(deps, trx, { id: user.id, workspaceId: user.workspace_id }, sessionId, 'refresh');
    if (ended.sessionIds.length === 0) return null;
    return startSession(deps, jwt, user, remember, trx);
  });
}

/**
 * A new access token of a live session, which goes on (the refresh cookie's way, docs/auth.md):
 * every tab of the console holds a token of the one session, so one tab's reload must not end
 * the others'. The session still ends at logout, revocation, deactivation or its expiry.
 */
export async function resumeSession(deps: Deps, jwt: JWT, user: User, session: SessionInfo) {
  const now = deps.now();
  const authCode = await issueAuthCode(deps.db, { userId: user.id, sessionId: session.id }, session.remember, now);
  return loginAnswer(jwt, user, session, authCode, now);
}

/**
 * The refresh cookie's token: a JWT of the session marked `use: "refresh"`, which the bearer
 * guard refuses (src/auth/auth.ts), so it is good for nothing but the refresh route.
 */
export function signRefreshToken(jwt: JWT, session: SessionInfo, now: Date): string {
  return jwt.sign({
    sub: String(session.userId),
    jti: session.id,
    use: 'refresh',
    iat: Math.floor(now.getTime() / 1000),
    exp: Math.floor(session.expiresAt.getTime() / 1000),
  });
}

/** The session a refresh token names (signature and expiry checked), or null. Liveness is the caller's to check. */
export function readRefreshToken(jwt: JWT, token: string): { sessionId: string; userId: string } | null {
  let claims: { sub?: unknown; jti?: unknown; use?: unknown };
  try {
    claims = jwt.verify(token);
  } catch {
    return null;
  }
  if (claims.use !== 'refresh' || typeof claims.jti !== 'string' || !isUuid(claims.jti) || typeof claims.sub !== 'string') return null;
  return { sessionId: claims.jti, userId: claims.sub };
}

/** What a revocation ended: sessions (JWTs) and personal-access tokens. */
export interface Ended {
  sessionIds: string[];
  patIds: number[];
}

/**
 * Ends one session or, with no `sessionId`, everything the user is signed in with: every
 * session, every personal-access token and every auth code not yet traded. The user's sockets are told in the same
 * transaction, so every api process closes the sockets of what ended once it commits.
 * A user-wide revocation is always announced (`userWide: true`): a process may hold a
 * socket whose credential ended earlier and whose event it missed.
 */
export async function endSessions(
  deps: Deps,
  db: Executor,
  user: { id: number; workspaceId: number },
  sessionId?: string,
  reason = 'logout',
): Promise<Ended> {
  const now = deps.now();
  const sessionIds = await revokeSessions(db, { userId: user.id, sessionId }, now);
  const userWide = sessionId === undefined;
  const patIds = userWide ? await revokePats(db, { userId: user.id }, now) : [];
  // An auth code issued before would otherwise start a new session after the revocation.
  if (userWide) await spendAuthCodes(db, user.id, now);
  if (userWide || sessionIds.length > 0) {
    await publishEvent(db, {
      type: 'session.revoked',
      workspaceId: user.workspaceId,
      targetUserId: user.id,
      // The revocation as it was asked for (`sessionId` when it named one), then what it ended.
      data: { userId: user.id, ...(sessionId === undefined ? {} : { sessionId }), sessionIds, patIds, userWide, reason },
    });
  }
  return { sessionIds, patIds };
}

/**
 * Ends every session of the user but the one asking (a password change keeps its own
 * session and signs out every other device), closing their sockets as endSessions does.
 * Auth codes not yet traded are spent too: one issued to another device before the change
 * would otherwise start a new session with the old password's login.
 */
export async function endOtherSessions(
  deps: Deps,
  db: Executor,
  user: { id: number; workspaceId: number },
  keepSessionId: string,
  reason: string,
): Promise<string[]> {
  const now = deps.now();
  const sessionIds = await revokeOtherSessions(db, user.id, keepSessionId, now);
  await spendAuthCodes(db, user.id, now);
  if (sessionIds.length > 0) {
    await publishEvent(db, {
      type: 'session.revoked',
      workspaceId: user.workspaceId,
      targetUserId: user.id,
      data: { userId: user.id, sessionIds, patIds: [], userWide: false, reason },
    });
  }
  return sessionIds;
}

/** Deletes one of the user's personal-access tokens and closes the sockets opened with it. */
export async function deletePat(deps: Deps, user: { id: number; workspaceId: number }, id: number, trail: Trail): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const patIds = await revokePats(trx, { userId: user.id, id }, deps.now());
    if (patIds.length === 0) return false;
    await recordAudit(trx, trail, 'personal_access_token.deleted', { type: 'personal_access_token', id });
    await publishEvent(trx, {
      type: 'token.revoked',
      workspaceId: user.workspaceId,
      targetUserId: user.id,
      data: { userId: user.id, patIds, reason: 'deleted' },
    });
    return true;
  });
}

let dummyHash: Promise<string> | undefined;
/** Verifies a password; for an unknown e-mail, against a throwaway hash, so both take as long. */
export async function verifyPassword(user: User | undefined, password: string): Promise<boolean> {
  if (!user) {
    dummyHash ??= argon2.hash(randomBytes(16).toString('hex'), { type: argon2.argon2id });
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(user.password_hash, password).catch(() => false);
}

/**
 * Login rate limit. The attempt is recorded before its password is checked and compared with
 * the attempts recorded before it, so a burst of parallel guesses cannot all slip in under
 * the limit. A refused attempt and a successful one are forgotten: only failures count.
 * Returns the attempt's id, to forget on success; throws 429 when over the limit.
 */
export async function admitLoginAttempt(deps: Deps, email: string, ip: string): Promise<number> {
  // Counted per client address key: an IPv6 client per /64, whatever address in it it uses.
  const address = clientAddressKey(ip);
  const now = deps.now();
  const windowMs = LOGIN_WINDOW_SECONDS * 1000;
  const id = await recordLoginAttempt(deps.db, email, address, now);
  const counts = await countFailedLogins(deps.db, email, address, new Date(now.getTime() - windowMs), id);
  const retryAfter = (oldest: Date | null) =>
    Math.max(1, Math.ceil(((oldest?.getTime() ?? now.getTime()) + windowMs - now.getTime()) / 1000));
  const over =
    counts.by_email >= LOGIN_LIMIT_PER_EMAIL ? counts.oldest_email : counts.by_ip >= LOGIN_LIMIT_PER_IP ? counts.oldest_ip : undefined;
  if (over !== undefined) {
    await forgetLoginAttempt(deps.db, id);
    throw errors.rateLimited(retryAfter(over));
  }
  return id;
}

export function forgetSuccessfulLogin(deps: Deps, attemptId: number): Promise<void> {
  return forgetLoginAttempt(deps.db, attemptId);
}
