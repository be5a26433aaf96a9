import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';
import { wellFormedJson } from '../text/well-formed.js';

/** SQL of teams and their members (docs/teams.md). */

/** A workspace's teams, oldest first as created, one cursor page. */
export async function listTeams(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(db.selectFrom('teams').selectAll().where('workspace_id', '=', workspaceId), BY_CREATED, page);
}

export async function findTeam(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('teams').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * A workspace's team, kept until the transaction ends (KEY SHARE): a thread or connection put in
 * it here is committed before the team's deletion starts, or sees the team gone.
 */
export async function keepTeam(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('teams').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forKeyShare().executeTakeFirst();
}

/** A workspace's team, locked until the transaction ends (its members are being replaced). */
export async function lockTeam(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('teams').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The team holding `name` in the workspace, whatever its case (the unique key is on lower(name)). */
export async function findTeamByName(db: Executor, workspaceId: number, name: string) {
  return db
    .selectFrom('teams')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .executeTakeFirst();
}

export async function insertTeam(
  db: Executor,
  row: { workspaceId: number; name: string; description: string | null; autoAssign: boolean; businessHours: object | null; at: Date },
) {
  return db
    .insertInto('teams')
    .values({
      workspace_id: row.workspaceId,
      name: row.name,
      description: row.description,
      auto_assign: row.autoAssign,
      business_hours: row.businessHours === null ? null : wellFormedJson(row.businessHours),
      created_at: row.at,
      updated_at: row.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTeam(
  db: Executor,
  workspaceId: number,
  id: number,
  patch: { name?: string; description?: string | null; auto_assign?: boolean; business_hours?: string | null; updated_at: Date },
) {
  return db.updateTable('teams').set(patch).where('workspace_id', '=', workspaceId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Deletes a team; its threads and connections keep going without one (ON DELETE SET NULL). */
export async function deleteTeam(db: Executor, workspaceId: number, id: number): Promise<boolean> {
  const row = await db.deleteFrom('teams').where('workspace_id', '=', workspaceId).where('id', '=', id).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** The member ids of each team, lowest first. */
export async function memberIdsOf(db: Executor, teamIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(teamIds.map((id) => [id, []]));
  if (teamIds.length === 0) return out;
  const rows = await db
    .selectFrom('team_members')
    .select(['team_id', 'user_id'])
    .where('team_id', 'in', teamIds)
    .orderBy('user_id')
    .execute();
  for (const r of rows) out.get(r.team_id)!.push(r.user_id);
  return out;
}

/** The ids among `ids` that are users of the workspace. */
export async function workspaceUserIds(db: Executor, workspaceId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

export async function replaceMembers(db: Executor, teamId: number, userIds: number[]) {
  await db.deleteFrom('team_members').where('team_id', '=', teamId).execute();
  if (userIds.length > 0)
    await db
      .insertInto('team_members')
      .values(userIds.map((user_id) => ({ team_id: teamId, user_id })))
      .execute();
}
