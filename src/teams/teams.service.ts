import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { publishSightChanged } from '../realtime/publish.js';
import { type BusinessHoursInput, checkBusinessHours } from '../sla/business-hours.js';
import { routeWaiting } from '../threads/routing.js';
import { restrictsAgents } from '../threads/visibility.js';
import {
  findTeam,
  findTeamByName,
  insertTeam,
  keepTeam,
  lockTeam,
  memberIdsOf,
  replaceMembers,
  updateTeam,
  workspaceUserIds,
} from './teams.queries.js';
import { type Team, teamResource } from './teams.resources.js';

const taken = (name: string) => errors.conflict(`a team named "${name}" already exists in this workspace`);

/** A name as stored: trimmed, and still 1–60 characters once trimmed. */
function teamName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw errors.validation('name: must not be blank');
  return trimmed;
}

export async function getTeam(deps: Pick<Deps, 'db'>, workspaceId: number, id: number): Promise<Team> {
  const row = await findTeam(deps.db, workspaceId, id);
  if (!row) throw errors.notFound('team');
  return teamResource(row, (await memberIdsOf(deps.db, [row.id])).get(row.id)!);
}

/**
 * A new team, without members. A name another team holds is a 409 naming it; the check gives
 * the clear message and the unique key still decides a race (a 409 from the error handler).
 */
export async function createTeam(
  deps: Deps,
  workspaceId: number,
  input: { name: string; description?: string | null; autoAssign?: boolean; businessHours?: BusinessHoursInput | null },
  trail: Trail,
) {
  const name = teamName(input.name);
  const businessHours = input.businessHours ? checkBusinessHours(input.businessHours) : null;
  if (await findTeamByName(deps.db, workspaceId, name)) throw taken(name);
  const row = await deps.db.transaction().execute(async (trx) => {
    const team = await insertTeam(trx, {
      workspaceId,
      name,
      description: input.description ?? null,
      autoAssign: input.autoAssign ?? false,
      businessHours,
      at: deps.now(),
    });
    await recordAudit(trx, trail, 'team.created', { type: 'team', id: team.id }, changesOf(null, { ...input, name }));
    return team;
  });
  return teamResource(row, []);
}

/** Changes a team; turning `autoAssign` on routes its waiting threads in the same transaction. */
export async function changeTeam(
  deps: Deps,
  workspaceId: number,
  id: number,
  patch: { name?: string; description?: string | null; autoAssign?: boolean; businessHours?: BusinessHoursInput | null },
  trail: Trail,
) {
  const name = patch.name === undefined ? undefined : teamName(patch.name);
  const businessHours = patch.businessHours ? checkBusinessHours(patch.businessHours) : patch.businessHours;
  if (name !== undefined) {
    const holder = await findTeamByName(deps.db, workspaceId, name);
    if (holder && holder.id !== id) throw taken(name);
  }
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    const before = await lockTeam(trx, workspaceId, id);
    const row = await updateTeam(trx, workspaceId, id, {
      ...(name !== undefined ? { name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.autoAssign !== undefined ? { auto_assign: patch.autoAssign } : {}),
      ...(businessHours !== undefined ? { business_hours: businessHours === null ? null : JSON.stringify(businessHours) } : {}),
      updated_at: now,
    });
    if (!row || !before) throw errors.notFound('team');
    const old = {
      name: before.name,
      description: before.description,
      autoAssign: before.auto_assign,
      businessHours: before.business_hours,
    };
    await recordAudit(trx, trail, 'team.updated', { type: 'team', id }, changesOf(old, { ...patch, name }));
    if (patch.autoAssign === true) await routeWaiting(deps, trx, workspaceId, now);
    return teamResource(row, (await memberIdsOf(trx, [row.id])).get(row.id)!);
  });
}

/** `PUT /v1/teams/:id/members`: the whole list, replaced in one transaction; only users of the workspace. */
export async function setTeamMembers(deps: Deps, workspaceId: number, id: number, userIds: number[], trail: Trail) {
  const wanted = [...new Set(userIds)].sort((a, b) => a - b);
  return deps.db.transaction().execute(async (trx) => {
    const team = await lockTeam(trx, workspaceId, id);
    if (!team) throw errors.notFound('team');
    const known = await workspaceUserIds(trx, workspaceId, wanted);
    const unknown = wanted.filter((u) => !known.has(u));
    if (unknown.length > 0) throw errors.validation(`userIds: ${unknown.slice(0, 10).join(', ')} not users of this workspace`);
    const before = (await memberIdsOf(trx, [team.id])).get(team.id) ?? [];
    await replaceMembers(trx, team.id, wanted);
    // Who joined or left sees other threads now: their clients re-read (docs/teams.md).
    const moved = [...before.filter((u) => !wanted.includes(u)), ...wanted.filter((u) => !before.includes(u))];
    if (moved.length > 0 && (await restrictsAgents(trx, workspaceId))) await publishSightChanged(trx, workspaceId, moved);
    await recordAudit(
      trx,
      trail,
      'team.members_changed',
      { type: 'team', id: team.id },
      changesOf({ userIds: before }, { userIds: wanted }),
    );
    const row = (await updateTeam(trx, workspaceId, team.id, { updated_at: deps.now() }))!;
    // A new member may take the team's waiting threads.
    await routeWaiting(deps, trx, workspaceId, deps.now());
    return teamResource(row, wanted);
  });
}

/**
 * The team of the workspace with `id`, or a 422 naming `field` (a thread or connection names
 * it). Kept (keepTeam) until the caller's transaction ends, so the team cannot be deleted
 * before the row naming it commits.
 */
export async function requireTeamOf(db: Executor, workspaceId: number, id: number, field = 'teamId') {
  const row = await keepTeam(db, workspaceId, id);
  if (!row) throw errors.validation(`${field}: ${id} is not a team of this workspace`);
  return row;
}
