import { sql } from 'kysely';
import { type Executor, PREPARED } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';

/**
 * The workspace requires two-factor sign-in (setting `require2fa`, default false) and the user
 * has not turned it on: the guard then lets them reach only what turns it on (docs/security.md).
 */
const twoFactorMissing =
  sql<boolean>`coalesce((workspaces.settings ->> 'require2fa')::boolean, false) AND users.totp_enabled_at IS NULL`.as('two_factor_missing');

export async function insertSession(db: Executor, row: { id: string; userId: number; remember: boolean; expiresAt: Date }) {
  await db.insertInto('sessions').values({ id: row.id, user_id: row.userId, remember: row.remember, expires_at: row.expiresAt }).execute();
}

/** A live session (not revoked, not expired at `now`) with its user and the user's app: read by every signed-in request, so prepared. */
export async function findLiveSession(db: Executor, id: string, now: Date) {
  return (
    db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
      .select([
        'sessions.id as session_id',
        'sessions.remember',
        'sessions.expires_at',
        'users.id as user_id',
        'users.workspace_id',
        'users.roles',
        'workspaces.app_id',
        twoFactorMissing,
      ])
      .where('sessions.id', '=', id)
      // Deactivation revokes every session too; this also covers one started in a race with it.
      .where('users.active', '=', true)
      .where('sessions.revoked_at', 'is', null)
      .where('sessions.expires_at', '>', now)
      .modifyEnd(PREPARED)
      .executeTakeFirst()
  );
}

/** Ends one session, or every live session of a user; returns the sessions it ended. */
export async function revokeSessions(db: Executor, filter: { userId: number; sessionId?: string }, at: Date): Promise<string[]> {
  let q = db.updateTable('sessions').set({ revoked_at: at }).where('user_id', '=', filter.userId).where('revoked_at', 'is', null);
  if (filter.sessionId !== undefined) q = q.where('id', '=', filter.sessionId);
  const rows = await q.returning('id').execute();
  return rows.map((r) => r.id);
}

export async function insertAuthCode(
  db: Executor,
  row: { codeHash: string; userId: number; sessionId: string | null; remember: boolean; expiresAt: Date },
) {
  await db
    .insertInto('auth_codes')
    .values({
      code_hash: row.codeHash,
      user_id: row.userId,
      session_id: row.sessionId,
      remember: row.remember,
      expires_at: row.expiresAt,
    })
    .execute();
}

/**
 * Spends an auth code: only once, only before it expires, and only while the session it was
 * minted in (if any) is live. So every way a session ends (logout, revocation, a refresh
 * replacing it, deactivation, its expiry) ends its codes too, with no step of its own.
 */
export async function consumeAuthCode(db: Executor, codeHash: string, now: Date) {
  return db
    .updateTable('auth_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) =>
      eb.or([
        eb('auth_codes.session_id', 'is', null),
        eb.exists(
          eb
            .selectFrom('sessions')
            .select(sql`1`.as('live'))
            .whereRef('sessions.id', '=', 'auth_codes.session_id')
            .where('sessions.revoked_at', 'is', null)
            .where('sessions.expires_at', '>', now),
        ),
      ]),
    )
    .returning(['user_id', 'remember'])
    .executeTakeFirst();
}

/** Spends every unspent auth code of a user (a user-wide revocation leaves none to trade for a session). */
export async function spendAuthCodes(db: Executor, userId: number, at: Date) {
  await db.updateTable('auth_codes').set({ used_at: at }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

export async function findUser(db: Executor, id: number) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

// ---- personal-access tokens ----

export async function insertPat(
  db: Executor,
  row: { userId: number; name: string; tokenHash: string; tokenPrefix: string; createdAt: Date; expiresAt: Date },
) {
  return db
    .insertInto('personal_access_tokens')
    .values({
      user_id: row.userId,
      name: row.name,
      token_hash: row.tokenHash,
      token_prefix: row.tokenPrefix,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A live token (not revoked, not expired at `now`) with its user and the user's app. */
export async function findActivePat(db: Executor, tokenHash: string, now: Date) {
  return db
    .selectFrom('personal_access_tokens')
    .innerJoin('users', 'users.id', 'personal_access_tokens.user_id')
    .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
    .select([
      'personal_access_tokens.id',
      'personal_access_tokens.expires_at',
      'personal_access_tokens.last_used_at',
      'users.id as user_id',
      'users.workspace_id',
      'users.roles',
      'workspaces.app_id',
      twoFactorMissing,
    ])
    .where('personal_access_tokens.token_hash', '=', tokenHash)
    .where('users.active', '=', true)
    .where('personal_access_tokens.revoked_at', 'is', null)
    .where('personal_access_tokens.expires_at', '>', now)
    .modifyEnd(PREPARED)
    .executeTakeFirst();
}

/** A user's live tokens (expired ones included, so they can be seen and deleted), newest first. */
export async function listPats(db: Executor, userId: number, page: CursorRequest) {
  return keysetPage(
    db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', userId).where('revoked_at', 'is', null),
    BY_CREATED,
    page,
  );
}

/** Ends one token, or every live token of a user; returns the tokens it ended. */
export async function revokePats(db: Executor, filter: { userId: number; id?: number }, at: Date): Promise<number[]> {
  let q = db
    .updateTable('personal_access_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', filter.userId)
    .where('revoked_at', 'is', null);
  if (filter.id !== undefined) q = q.where('id', '=', filter.id);
  const rows = await q.returning('id').execute();
  return rows.map((r) => r.id);
}

/**
 * Which of these sessions and tokens are still live at `now`: one statement for every
 * credential a realtime process holds sockets for, however many there are.
 */
export async function findLiveCredentials(db: Executor, sessionIds: string[], patIds: number[], now: Date) {
  const { rows } = await sql<{ kind: 'session' | 'pat'; id: string }>`
    SELECT 'session' AS kind, id::text AS id FROM sessions
      WHERE id = ANY(${sessionIds}::uuid[]) AND revoked_at IS NULL AND expires_at > ${now}
    UNION ALL
    SELECT 'pat', id::text FROM personal_access_tokens
      WHERE id = ANY(${patIds}::bigint[]) AND revoked_at IS NULL AND expires_at > ${now}`.execute(db);
  return {
    sessionIds: new Set(rows.filter((r) => r.kind === 'session').map((r) => r.id)),
    patIds: new Set(rows.filter((r) => r.kind === 'pat').map((r) => Number(r.id))),
  };
}

// ---- failed logins ----

/** Records an attempt before its password is checked; returns its id. */
export async function recordLoginAttempt(db: Executor, email: string, ip: string, at: Date): Promise<number> {
  const row = await db.insertInto('login_attempts').values({ email, ip, created_at: at }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Forgets an attempt that must not count: a success, or one refused by the limit itself. */
export async function forgetLoginAttempt(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('login_attempts').where('id', '=', id).execute();
}

/** Attempts before `beforeId` since `since`, for this e-mail and for this address, with the oldest of each. */
export async function countFailedLogins(db: Executor, email: string, ip: string, since: Date, beforeId: number) {
  const { rows } = await sql<{ by_email: number; oldest_email: Date | null; by_ip: number; oldest_ip: Date | null }>`
    SELECT
      count(*) FILTER (WHERE email = ${email})::int AS by_email,
      min(created_at) FILTER (WHERE email = ${email}) AS oldest_email,
      count(*) FILTER (WHERE ip = ${ip})::int AS by_ip,
      min(created_at) FILTER (WHERE ip = ${ip}) AS oldest_ip
    FROM login_attempts
    WHERE created_at > ${since} AND id < ${beforeId} AND (email = ${email} OR ip = ${ip})`.execute(db);
  return rows[0]!;
}

/** Ends every live session of a user but `keepSessionId` (the one asking); returns the sessions it ended. */
export async function revokeOtherSessions(db: Executor, userId: number, keepSessionId: string, at: Date): Promise<string[]> {
  const rows = await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .where('id', '<>', keepSessionId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Holds the user (FOR SHARE) while their password is still `passwordHash` and they are active:
 * a sign-in checked against that hash starts its session only then, and a reset or change at
 * the same moment waits for it (and ends that session too) or has already made it false.
 */
export async function holdPassword(db: Executor, userId: number, passwordHash: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('id', '=', userId)
    .where('password_hash', '=', passwordHash)
    .where('active', '=', true)
    .forShare()
    .executeTakeFirst();
  return row !== undefined;
}

/** A user's new password hash (a change, a reset, an accepted invite). */
export async function setPasswordHash(
  db: Executor,
  userId: number,
  passwordHash: string,
  activate: boolean,
  /** Only while the user's hash is still this one (the password just checked); false when it is not. */
  replacing?: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, ...(activate ? { active: true } : {}) })
    .where('id', '=', userId)
    .$if(replacing !== undefined, (q) => q.where('password_hash', '=', replacing!))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
