import { type RawBuilder, sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { UserAvailability } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';

/** `connected`: one of the user's realtime sockets, on any api process, has not expired at `at`. */
export const hasOpenSocket = (userId: RawBuilder<number>, at: Date) =>
  sql<boolean>`EXISTS (SELECT 1 FROM user_sockets s WHERE s.user_id = ${userId} AND s.expires_at > ${at})`;
const connectedAt = (at: Date) => hasOpenSocket(sql.ref('users.id'), at).as('connected');
/** The user has an invite not used yet (expired or not); a deactivated user's invites are retired. */
const hasOpenInvite = sql<boolean>`EXISTS (SELECT 1 FROM account_tokens t WHERE t.user_id = users.id AND t.kind = 'invite' AND t.used_at IS NULL)`;
/** `invited`: inactive with an invite not used yet. */
const invited = sql<boolean>`(NOT users.active AND ${hasOpenInvite})`.as('invited');
/** `inviteExpiresAt`: when the newest open invite of an invited user stops working (null for anyone else). */
const inviteExpiresAt = sql<Date | null>`(SELECT max(t.expires_at) FROM account_tokens t
  WHERE NOT users.active AND t.user_id = users.id AND t.kind = 'invite' AND t.used_at IS NULL)`.as('invite_expires_at');

/**
 * The user of `workspaceId` with this e-mail who was invited and has not signed up (inactive,
 * an invite never used, expired or not), locked for the new invite; undefined for anyone else.
 */
export async function findPendingInvitee(db: Executor, workspaceId: number, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'roles'])
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('workspace_id', '=', workspaceId)
    .where('active', '=', false)
    .where(hasOpenInvite)
    .forUpdate()
    .executeTakeFirst();
}

/** A workspace's users, newest first, one cursor page; with `connected` at `at`. */
export async function listUsers(db: Executor, workspaceId: number, page: CursorRequest, at: Date) {
  return keysetPage(
    db
      .selectFrom('users')
      .selectAll()
      .select([connectedAt(at), invited, inviteExpiresAt])
      .where('workspace_id', '=', workspaceId),
    BY_CREATED,
    page,
  );
}

/** Users by id, with `connected` at `at` (what `user.updated` carries). */
export async function findUserViews(db: Executor, ids: number[], at: Date) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('users')
    .selectAll()
    .select([connectedAt(at), invited, inviteExpiresAt])
    .where('id', 'in', ids)
    .orderBy('id')
    .execute();
}

/** One user of the workspace; another workspace's user is not found. */
export async function findWorkspaceUser(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * Locks the workspace's active admins (in id order, so two concurrent changes queue rather
 * than deadlock) and returns their ids: the set a change must not empty. NO KEY UPDATE, not
 * UPDATE: it still queues two such changes, but not a transaction that holds the routing lock
 * and assigns one of them a thread (the foreign key's KEY SHARE), which this change may wait
 * for next.
 */
export async function lockActiveAdmins(db: Executor, workspaceId: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    SELECT id FROM users
    WHERE workspace_id = ${workspaceId} AND active AND 'admin' = ANY(roles)
    ORDER BY id
    FOR NO KEY UPDATE`.execute(db);
  return rows.map((r) => r.id);
}

export async function updateUser(
  db: Executor,
  id: number,
  patch: {
    name?: string;
    roles?: string[];
    active?: boolean;
    availability?: UserAvailability;
    max_open_threads?: number | null;
    notify_email_assigned?: boolean;
    notify_email_mentioned?: boolean;
    notify_email_sla?: boolean;
  },
) {
  return db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function insertUser(
  db: Executor,
  row: { workspaceId: number; name: string; email: string; passwordHash: string; roles: string[] },
) {
  return db
    .insertInto('users')
    .values({
      workspace_id: row.workspaceId,
      name: row.name,
      email: row.email,
      password_hash: row.passwordHash,
      roles: row.roles,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findUserByEmail(db: Executor, email: string) {
  return db.selectFrom('users').selectAll().where(sql`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
}
