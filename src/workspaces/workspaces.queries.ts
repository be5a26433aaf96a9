import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

export async function insertWorkspace(db: Executor, name: string, appId: string) {
  return db.insertInto('workspaces').values({ name, app_id: appId }).returningAll().executeTakeFirstOrThrow();
}

export async function findWorkspace(db: Executor, id: number) {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Offset page of workspaces for the operator, oldest first, with the total of the same set. */
export async function listWorkspaces(db: Executor, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db.selectFrom('workspaces').selectAll().orderBy('id').limit(limit).offset(offset).execute(),
    db.selectFrom('workspaces').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: total.n };
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
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}
