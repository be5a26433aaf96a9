import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { CannedResponsesTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { Timestamp } from '../http/schemas.js';
import { findCannedResponseByCode, insertCannedResponse, updateCannedResponse } from './canned-responses.queries.js';

export const SHORT_CODE_PATTERN = '^[a-z0-9_-]{1,40}$';

export const CannedResponseResource = Type.Object(
  {
    id: Type.Integer(),
    shortCode: Type.String({ description: '1–40 of a-z 0-9 - _, unique in the workspace' }),
    content: Type.String(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'CannedResponse' },
);
export type CannedResponse = Static<typeof CannedResponseResource>;

export function cannedResponseResource(row: Selectable<CannedResponsesTable>): CannedResponse {
  return {
    id: row.id,
    shortCode: row.short_code,
    content: row.content,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const taken = (shortCode: string) => errors.conflict(`a canned response with short code "${shortCode}" already exists`);

export async function createCannedResponse(deps: Deps, workspaceId: number, input: { shortCode: string; content: string }) {
  const row = await insertCannedResponse(deps.db, { workspaceId, ...input, at: deps.now() });
  if (!row) throw taken(input.shortCode);
  return cannedResponseResource(row);
}

/**
 * Changes a canned response. A short code another one holds is a 409 naming it; the check
 * before the update gives the clear message, and the unique key still decides a race (its
 * violation is a 409 too, from the error handler).
 */
export async function changeCannedResponse(deps: Deps, workspaceId: number, id: number, patch: { shortCode?: string; content?: string }) {
  if (patch.shortCode !== undefined) {
    const holder = await findCannedResponseByCode(deps.db, workspaceId, patch.shortCode);
    if (holder && holder.id !== id) throw taken(patch.shortCode);
  }
  const row = await updateCannedResponse(deps.db, workspaceId, id, {
    ...(patch.shortCode !== undefined ? { short_code: patch.shortCode } : {}),
    ...(patch.content !== undefined ? { content: patch.content } : {}),
    updated_at: deps.now(),
  });
  if (!row) throw errors.notFound('canned response');
  return cannedResponseResource(row);
}
