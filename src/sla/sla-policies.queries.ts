import type { Executor } from '../db/database.js';
import type { SlaConditionsValue } from '../db/types.js';
import { wellFormedJson } from '../text/well-formed.js';

/** SQL of SLA policies (docs/sla.md): a workspace has a handful, read whole, in position order. */

export interface PolicyWrite {
  name: string;
  position: number;
  enabled: boolean;
  first_response: string | null;
  next_response: string | null;
  resolution: string | null;
  business_hours_only: boolean;
  conditions: SlaConditionsValue;
}

/** The workspace's policies, by position (then id); with `enabledOnly`, those that apply. */
export async function listPolicies(db: Executor, workspaceId: number, enabledOnly = false) {
  return db
    .selectFrom('sla_policies')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .$if(enabledOnly, (q) => q.where('enabled', '=', true))
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export async function findPolicy(db: Executor, workspaceId: number, id: number) {
  return db.selectFrom('sla_policies').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function insertPolicy(db: Executor, workspaceId: number, row: PolicyWrite, at: Date) {
  return db
    .insertInto('sla_policies')
    .values({ ...row, workspace_id: workspaceId, conditions: wellFormedJson(row.conditions), created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updatePolicy(db: Executor, workspaceId: number, id: number, row: PolicyWrite, at: Date) {
  return db
    .updateTable('sla_policies')
    .set({ ...row, conditions: wellFormedJson(row.conditions), updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deletePolicy(db: Executor, workspaceId: number, id: number): Promise<boolean> {
  const row = await db
    .deleteFrom('sla_policies')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Which of these connections and teams belong to the workspace (a policy's conditions name them). */
export async function knownIds(db: Executor, workspaceId: number, connectionIds: number[], teamIds: number[]) {
  const connections =
    connectionIds.length === 0
      ? []
      : await db
          .selectFrom('connections')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', connectionIds)
          // A deleted connection is unknown: it gets no new threads a policy could time.
          .where('deleted_at', 'is', null)
          .execute();
  const teams =
    teamIds.length === 0
      ? []
      : await db.selectFrom('teams').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', teamIds).execute();
  return { connections: new Set(connections.map((r) => r.id)), teams: new Set(teams.map((r) => r.id)) };
}
