import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { Executor } from '../db/database.js';
import type { WorkspacesTable } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Timestamp } from '../http/schemas.js';
import { findWorkspace, insertWorkspace } from './workspaces.queries.js';

export function newAppId(): string {
  return `app_${randomBytes(12).toString('hex')}`;
}

export const WorkspaceResource = Type.Object(
  { id: Type.Integer(), name: Type.String(), appId: Type.String(), createdAt: Timestamp },
  { title: 'Workspace' },
);

export function workspaceResource(row: Selectable<WorkspacesTable>): Static<typeof WorkspaceResource> {
  return { id: row.id, name: row.name, appId: row.app_id, createdAt: row.created_at.toISOString() };
}

/** The workspace, or `not_found`: the one existence check before writing into a workspace. */
export async function requireWorkspace(db: Executor, workspaceId: number) {
  const workspace = await findWorkspace(db, workspaceId);
  if (!workspace) throw errors.notFound(`workspace ${workspaceId}`);
  return workspace;
}

export async function createWorkspace(db: Executor, name: string) {
  return workspaceResource(await insertWorkspace(db, name, newAppId()));
}
