import type { Static } from 'typebox';
import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { normaliseLabels } from '../threads/thread-workflow.service.js';
import { deletePolicy, findPolicy, insertPolicy, knownIds, listPolicies, type PolicyWrite, updatePolicy } from './sla-policies.queries.js';
import { type SlaPolicyCreate, type SlaPolicyPatch, slaPolicyFields, slaPolicyResource } from './sla-policies.resources.js';
import { SLA_TARGETS, targetMs } from './sla-state.js';

/** At most this many policies in a workspace: matching reads them all on each opening. */
export const MAX_SLA_POLICIES = 100;

/**
 * The policy as stored, or a 422 naming the field: targets, conditions naming what exists. The
 * teams and connections are checked when the conditions are written (`checkIds`): a policy
 * naming one deleted since can still be renamed or disabled.
 */
async function checked(db: Executor, workspaceId: number, row: PolicyWrite, checkIds = true): Promise<PolicyWrite> {
  const name = row.name.trim();
  if (name.length === 0) throw errors.validation('name: must not be blank');
  const targets = { firstResponse: row.first_response, nextResponse: row.next_response, resolution: row.resolution };
  for (const t of SLA_TARGETS) if (targets[t] !== null) targetMs(targets[t]!, t);
  if (SLA_TARGETS.every((t) => targets[t] === null))
    throw errors.validation('firstResponse, nextResponse, resolution: give at least one target');
  const c = { ...row.conditions };
  if (c.labels) c.labels = normaliseLabels(c.labels);
  if (c.priorities) c.priorities = [...new Set(c.priorities)];
  if (c.connectionIds) c.connectionIds = [...new Set(c.connectionIds)];
  if (c.teamIds) c.teamIds = [...new Set(c.teamIds)];
  if (!checkIds) return { ...row, name, conditions: c };
  const known = await knownIds(db, workspaceId, c.connectionIds ?? [], c.teamIds ?? []);
  const strangerConnection = c.connectionIds?.find((id) => !known.connections.has(id));
  if (strangerConnection !== undefined)
    throw errors.validation(`conditions.connectionIds: ${strangerConnection} is not a connection of this workspace`);
  const strangerTeam = c.teamIds?.find((id) => !known.teams.has(id));
  if (strangerTeam !== undefined) throw errors.validation(`conditions.teamIds: ${strangerTeam} is not a team of this workspace`);
  return { ...row, name, conditions: c };
}

export async function createSlaPolicy(deps: Deps, trail: Trail, workspaceId: number, body: Static<typeof SlaPolicyCreate>) {
  return deps.db.transaction().execute(async (trx) => {
    const existing = await listPolicies(trx, workspaceId);
    if (existing.length >= MAX_SLA_POLICIES) throw errors.validation(`a workspace holds at most ${MAX_SLA_POLICIES} SLA policies`);
    const row = await checked(trx, workspaceId, {
      name: body.name,
      // Appended after the others unless placed.
      position: body.position ?? (existing.length === 0 ? 0 : Math.max(...existing.map((p) => p.position)) + 1),
      enabled: body.enabled ?? true,
      first_response: body.firstResponse ?? null,
      next_response: body.nextResponse ?? null,
      resolution: body.resolution ?? null,
      business_hours_only: body.businessHoursOnly ?? false,
      conditions: body.conditions ?? {},
    });
    const created = await insertPolicy(trx, workspaceId, row, deps.now());
    await recordAudit(trx, trail, 'sla_policy.created', { type: 'sla_policy', id: created.id }, changesOf(null, slaPolicyFields(row)));
    return slaPolicyResource(created);
  });
}

/**
 * Changes a policy; threads keep the clocks they have until they open again or their
 * priority, team or labels change (docs/sla.md).
 */
export async function changeSlaPolicy(deps: Deps, trail: Trail, workspaceId: number, id: number, patch: Static<typeof SlaPolicyPatch>) {
  return deps.db.transaction().execute(async (trx) => {
    const current = await findPolicy(trx, workspaceId, id);
    if (!current) throw errors.notFound('SLA policy');
    const row = await checked(
      trx,
      workspaceId,
      {
        name: patch.name ?? current.name,
        position: patch.position ?? current.position,
        enabled: patch.enabled ?? current.enabled,
        first_response: patch.firstResponse === undefined ? current.first_response : patch.firstResponse,
        next_response: patch.nextResponse === undefined ? current.next_response : patch.nextResponse,
        resolution: patch.resolution === undefined ? current.resolution : patch.resolution,
        business_hours_only: patch.businessHoursOnly ?? current.business_hours_only,
        conditions: patch.conditions ?? current.conditions,
      },
      patch.conditions !== undefined,
    );
    const updated = await updatePolicy(trx, workspaceId, id, row, deps.now());
    if (!updated) throw errors.notFound('SLA policy');
    await recordAudit(
      trx,
      trail,
      'sla_policy.updated',
      { type: 'sla_policy', id },
      changesOf(slaPolicyFields(current), slaPolicyFields(row)),
    );
    return slaPolicyResource(updated);
  });
}

/** Deletes a policy; threads keep the clocks they have. */
export async function removeSlaPolicy(deps: Deps, trail: Trail, workspaceId: number, id: number) {
  await deps.db.transaction().execute(async (trx) => {
    if (!(await deletePolicy(trx, workspaceId, id))) throw errors.notFound('SLA policy');
    await recordAudit(trx, trail, 'sla_policy.deleted', { type: 'sla_policy', id });
  });
}
