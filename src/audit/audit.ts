import type { FastifyRequest } from 'fastify';
import type { Executor } from '../db/database.js';
import { insertAuditEntry } from './audit.queries.js';

/**
 * Who acts, from where, on which workspace: what every audit entry of one request shares.
 * Made once per request by `trailOf` and handed to the service that writes the change.
 */
export interface Trail {
  workspaceId: number | null;
  actor: { type: 'user' | 'api_key' | 'operator' | 'system'; id: number | null };
  ip: string | null;
}

/**
 * The caller as the guards set it on `request.auth` (src/auth/auth.ts), named here by shape
 * only: the audit log sits below every feature that writes to it, auth included.
 */
type Caller =
  | { kind: 'admin_key' }
  | { kind: 'api_key'; apiKeyId: number; workspaceId: number }
  | { kind: 'user' | 'pat'; userId: number; workspaceId: number };

/** The platform operator's admin key or an operator user on `/v1/operator` routes act as `operator`. */
function actorOf(auth: Caller | null, operatorRoute: boolean): Trail['actor'] {
  if (!auth) return { type: 'system', id: null };
  if (auth.kind === 'admin_key') return { type: 'operator', id: null };
  if (auth.kind === 'api_key') return { type: 'api_key', id: auth.apiKeyId };
  return { type: operatorRoute ? 'operator' : 'user', id: auth.userId };
}

/** The trail of a request whose caller the guards resolved; `workspaceId` when the change is another workspace's (operator routes). */
export function trailOf(request: FastifyRequest, workspaceId?: number): Trail {
  const auth = request.auth as Caller | null;
  const operatorRoute =
    (request.routeOptions.url ?? '').startsWith('/v1/operator') || (request.routeOptions.url ?? '').startsWith('/v1/engage');
  const own = auth && auth.kind !== 'admin_key' ? auth.workspaceId : null;
  return { workspaceId: workspaceId ?? own, actor: actorOf(auth, operatorRoute), ip: request.ip };
}

/** The service itself (the CLI, scripts, jobs): no person, no address. */
export function systemTrail(workspaceId: number | null): Trail {
  return { workspaceId, actor: { type: 'system', id: null }, ip: null };
}

/** A trail for a person not yet signed in (a sign-in attempt): the user acts on their own workspace. */
export function personTrail(user: { id: number; workspace_id: number }, ip: string): Trail {
  return { workspaceId: user.workspace_id, actor: { type: 'user', id: user.id }, ip };
}

/** What a secret's value becomes in `changes`: whether it is set, never what it is. */
export const SECRET = '[set]';

/**
 * `changes` of a change: each field given in `after` whose value differs from `before`, as
 * `{old, new}`. Fields named in `secrets` show `"[set]"` (or null when cleared) on both sides.
 */
export function changesOf(
  before: Record<string, unknown> | null,
  after: Record<string, unknown>,
  secrets: readonly string[] = [],
): Record<string, { old: unknown; new: unknown }> {
  const out: Record<string, { old: unknown; new: unknown }> = {};
  const shown = (field: string, v: unknown) => (secrets.includes(field) && v !== null && v !== undefined ? SECRET : (v ?? null));
  for (const [field, value] of Object.entries(after)) {
    if (value === undefined) continue;
    const old = before?.[field];
    if (before && JSON.stringify(old) === JSON.stringify(value) && !secrets.includes(field)) continue;
    out[field] = { old: shown(field, old), new: shown(field, value) };
  }
  return out;
}

/**
 * Writes one audit entry (docs/security.md, "Audit log"). Call it with the transaction of the
 * change it records, so the entry exists exactly when the change does. Secrets never go in:
 * build `changes` with `changesOf` and name them.
 */
export async function recordAudit(
  db: Executor,
  trail: Trail,
  action: string,
  target: { type: string; id: number | string } | null,
  changes: Record<string, unknown> | null = null,
): Promise<void> {
  await insertAuditEntry(db, {
    workspaceId: trail.workspaceId,
    actorType: trail.actor.type,
    actorId: trail.actor.id,
    action,
    targetType: target?.type ?? null,
    targetId: target === null ? null : String(target.id),
    ip: trail.ip,
    changes: changes !== null && Object.keys(changes).length === 0 ? null : changes,
  });
}
