import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { Executor } from '../db/database.js';
import type { UsersTable, WorkspacesTable } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Timestamp } from '../http/schemas.js';
import { findUserByEmail, findWorkspace, insertUser, insertWorkspace } from './workspaces.queries.js';

/** Roles a user may hold: `admin` (workspace admin) and `operator` (platform staff). */
export const USER_ROLES = ['admin', 'operator', 'agent'] as const;

export function newAppId(): string {
  return `app_${randomBytes(12).toString('hex')}`;
}

export const WorkspaceResource = Type.Object(
  { id: Type.Integer(), name: Type.String(), appId: Type.String(), createdAt: Timestamp },
  { title: 'Workspace' },
);

/** docs/api.md UserResource. */
export const UserResource = Type.Object(
  { id: Type.Integer(), name: Type.String(), email: Type.String(), workspaces_id: Type.Integer(), roles: Type.Array(Type.String()) },
  { title: 'UserResource' },
);

export function workspaceResource(row: Selectable<WorkspacesTable>): Static<typeof WorkspaceResource> {
  return { id: row.id, name: row.name, appId: row.app_id, createdAt: row.created_at.toISOString() };
}

/** UserResource of docs/api.md: snake_case `workspaces_id` as the contract names it. */
export function userResource(row: Selectable<UsersTable>): Static<typeof UserResource> {
  return { id: row.id, name: row.name, email: row.email, workspaces_id: row.workspace_id, roles: row.roles };
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

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id });
}

export async function createUser(
  db: Executor,
  workspaceId: number,
  input: { name: string; email: string; password: string; roles: string[] },
) {
  await requireWorkspace(db, workspaceId);
  if (await findUserByEmail(db, input.email)) throw errors.conflict('a user with this e-mail already exists');
  const passwordHash = await hashPassword(input.password);
  const row = await insertUser(db, {
    workspaceId,
    name: input.name,
    email: input.email,
    passwordHash,
    roles: [...new Set(input.roles)],
  });
  return userResource(row);
}
