import type { Static } from 'typebox';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { normaliseLabels } from '../threads/thread-workflow.service.js';
import { findPolicy, insertPolicy, knownIds, listPolicies, type PolicyWrite, updatePolicy } from './sla-policies.queries.js';
import { type SlaPolicyCreate, type SlaPolicyPatch, slaPolicyResource } from './sla-policies.resources.js';
import { SLA_TARGETS, targetMs } from './sla-state.js';

/** At most this many policies in a workspace: matching reads them all on each opening. */
export const MAX_SLA_POLICIES = 100;

/** The policy as stored, or a 422 naming the field: targets, conditions naming what exists. */
async function checked(deps: Pick<Deps, 'db'>, workspaceId: number, row: PolicyWrite): Promise<PolicyWrite> {
  const name = row.name.trim();
  if (name.length === 0) throw errors.validation('name: must not be blank');
  const targets = { firstResponse: row.first_response, nextResponse: row.next_response, resolution: row.resolution };
  for (const t of SLA_TARGETS) if (targets[t] !== null) targetMs(targets[t]!, t);
  if (SLA_TARGETS.every((t) => targets[t] === null))
    throw errors.validation('firstResponse, nextResponse, resolution: give at least one target');
  const c = { ...row.conditions };
  if (c.labels) c.labels = normaliseLabels(c.labels);
  if (c.priorities) c.priorities = [...new Set(c.priorities)];
  const known = await knownIds(deps.db, workspaceId, c.connectionIds ?? [], c.teamIds ?? []);
  const strangerConnection = c.connectionIds?.find((id) => !known.connections.has(id));
  if (strangerConnection !== undefined)
    throw errors.validation(`conditions.connectionIds: ${strangerConnection} is not a connection of this workspace`);
  const strangerTeam = c.teamIds?.find((id) => !known.teams.has(id));
  if (strangerTeam !== undefined) throw errors.validation(`conditions.teamIds: ${strangerTeam} is not a team of this workspace`);
  return { ...row, name, conditions: c };
}

export async function createSlaPolicy(deps: Deps, workspaceId: number, body: Static<typeof SlaPolicyCreate>) {
  const existing = await listPolicies(deps.db, workspaceId);
  if (existing.length >= MAX_SLA_POLICIES) throw errors.validation(`a workspace holds at most ${MAX_SLA_POLICIES} SLA policies`);
  const row = await checked(deps, workspaceId, {
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
  return slaPolicyResource(await insertPolicy(deps.db, workspaceId, row, deps.now()));
}

/**
 * Changes a policy; threads keep the clocks they have until they open again or their
 * priority, team or labels change (docs/sla.md).
 */
export async function changeSlaPolicy(deps: Deps, workspaceId: number, id: number, patch: Static<typeof SlaPolicyPatch>) {
  const current = await findPolicy(deps.db, workspaceId, id);
  if (!current) throw errors.notFound('SLA policy');
  const row = await checked(deps, workspaceId, {
    name: patch.name ?? current.name,
    position: patch.position ?? current.position,
    enabled: patch.enabled ?? current.enabled,
    first_response: patch.firstResponse === undefined ? current.first_response : patch.firstResponse,
    next_response: patch.nextResponse === undefined ? current.next_response : patch.nextResponse,
    resolution: patch.resolution === undefined ? current.resolution : patch.resolution,
    business_hours_only: patch.businessHoursOnly ?? current.business_hours_only,
    conditions: patch.conditions ?? current.conditions,
  });
  const updated = await updatePolicy(deps.db, workspaceId, id, row, deps.now());
  if (!updated) throw errors.notFound('SLA policy');
  return slaPolicyResource(updated);
}
