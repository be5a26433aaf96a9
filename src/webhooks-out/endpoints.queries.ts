import { type Selectable, sql } from 'kysely';
import { lockKey } from '../db/advisory-locks.js';
import { type Executor, PREPARED } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { EndpointScheme, WebhookEndpointsTable } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/** An endpoint's id drawn before its row, so its secret can be sealed for that id. */
export async function nextEndpointId(db: Executor): Promise<number> {
  const { rows } = await sql<{ id: number }>`SELECT nextval(pg_get_serial_sequence('webhook_endpoints', 'id')) AS id`.execute(db);
  return rows[0]!.id;
}

export interface NewEndpoint {
  id: number;
  workspaceId: number;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  scheme: EndpointScheme;
  secretSealed: Buffer;
}

export async function insertEndpoint(db: Executor, e: NewEndpoint, at: Date): Promise<EndpointRow> {
  const { rows } = await sql<EndpointRow>`
    INSERT INTO webhook_endpoints (id, workspace_id, url, description, events, enabled, signature_scheme, secret_sealed, created_at, updated_at)
    OVERRIDING SYSTEM VALUE
    VALUES (${e.id}, ${e.workspaceId}, ${e.url}, ${e.description}, ${e.events}::text[], ${e.enabled}, ${e.scheme}, ${e.secretSealed}, ${at}, ${at})
    RETURNING *`.execute(db);
  return rows[0]!;
}

export async function listEndpoints(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId), BY_CREATED, page);
}

/** One of the workspace's endpoints; `lock` holds it until the transaction ends (a rotation). */
export async function findEndpoint(db: Executor, workspaceId: number, id: number, lock = false): Promise<EndpointRow | undefined> {
  const q = db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  return (lock ? q.forUpdate() : q).executeTakeFirst();
}

export interface EndpointPatch {
  url?: string;
  description?: string;
  events?: string[];
  scheme?: EndpointScheme;
  enabled?: boolean;
}

/**
 * Changes an endpoint. Enabling a disabled one clears why it was disabled and its failure
 * streak, so the 5-day rule counts afresh; disabling an enabled one by hand leaves no reason.
 * Only a change of state resets them: `enabled: true` said again to an enabled endpoint (a
 * client that sends its whole configuration) must not keep a failing receiver from ever being
 * disabled, nor `enabled: false` said to one the service disabled erase why.
 */
export async function updateEndpoint(
  db: Executor,
  workspaceId: number,
  id: number,
  patch: EndpointPatch,
  at: Date,
): Promise<EndpointRow | undefined> {
  let q = db.updateTable('webhook_endpoints').set({ updated_at: at }).where('workspace_id', '=', workspaceId).where('id', '=', id);
  if (patch.url !== undefined) q = q.set({ url: patch.url });
  if (patch.description !== undefined) q = q.set({ description: patch.description });
  if (patch.events !== undefined) q = q.set({ events: patch.events });
  if (patch.scheme !== undefined) q = q.set({ signature_scheme: patch.scheme });
  if (patch.enabled !== undefined) {
    const same = sql<boolean>`enabled = ${patch.enabled}`;
    q = q.set({
      enabled: patch.enabled,
      disabled_reason: sql<string | null>`CASE WHEN ${same} THEN disabled_reason END`,
      failing_since: sql<Date | null>`CASE WHEN ${same} THEN failing_since END`,
    });
  }
  return q.returningAll().executeTakeFirst();
}

/**
 * Deletes an endpoint with its deliveries and their attempts. Deliveries would go by their
 * foreign key's cascade, but attempts have none to their delivery (a partition of a referenced
 * table could not be dropped while referenced: docs/operations.md, "Partitions"), so both go
 * here, in the caller's transaction.
 */
export async function deleteEndpoint(db: Executor, workspaceId: number, id: number): Promise<boolean> {
  await sql`
    WITH deliveries AS (
      DELETE FROM webhook_deliveries
      WHERE endpoint_id = (SELECT id FROM webhook_endpoints WHERE workspace_id = ${workspaceId} AND id = ${id})
      RETURNING id
    )
    DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM deliveries)`.execute(db);
  const r = await db.deleteFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** A new secret; the old one stays valid (signed alongside) until `previousExpiresAt`, or not at all when null. */
export async function replaceSecret(
  db: Executor,
  id: number,
  secrets: { sealed: Buffer; previousSealed: Buffer | null; previousExpiresAt: Date | null },
  at: Date,
): Promise<EndpointRow> {
  return db
    .updateTable('webhook_endpoints')
    .set({
      secret_sealed: secrets.sealed,
      previous_secret_sealed: secrets.previousSealed,
      previous_secret_expires_at: secrets.previousExpiresAt,
      updated_at: at,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Enabled endpoints of these workspaces with what they subscribe to: who gets an event. Every
 * announcement reads it (an inbound batch, a reply, a send's outcome): prepared, its
 * workspaces one array parameter.
 */
export async function findSubscribedEndpoints(db: Executor, workspaceIds: number[]) {
  if (workspaceIds.length === 0) return [];
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'workspace_id', 'events'])
    .where('workspace_id', '=', sql<number>`ANY(${workspaceIds}::bigint[])`)
    .where('enabled', '=', true)
    .modifyEnd(PREPARED)
    .execute();
}

/** An endpoint has succeeded: its failure streak ends. Written only when there is one. */
export async function clearFailureStreaks(db: Executor, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY(${ids}::bigint[]) AND failing_since IS NOT NULL`.execute(db);
}

/** Endpoints that failed at `at`: their streak starts unless one is already running. */
export async function startFailureStreaks(db: Executor, ids: number[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE webhook_endpoints SET failing_since = ${at} WHERE id = ANY(${ids}::bigint[]) AND failing_since IS NULL`.execute(db);
}

/**
 * Disables endpoints still enabled: the given ones with their reason, and among `failingIds`
 * those whose streak began before `staleBefore`. Returns each endpoint it disabled, once.
 */
export async function disableEndpoints(
  db: Executor,
  gone: number[],
  goneReason: string,
  failingIds: number[],
  staleBefore: Date,
  staleReason: string,
  at: Date,
) {
  if (gone.length === 0 && failingIds.length === 0) return [];
  const { rows } = await sql<{ id: number; workspace_id: number; disabled_reason: string }>`
    UPDATE webhook_endpoints
    SET enabled = false, updated_at = ${at},
        disabled_reason = CASE WHEN id = ANY(${gone}::bigint[]) THEN ${goneReason} ELSE ${staleReason} END
    WHERE enabled AND (id = ANY(${gone}::bigint[]) OR (id = ANY(${failingIds}::bigint[]) AND failing_since <= ${staleBefore}))
    RETURNING id, workspace_id, disabled_reason`.execute(db);
  return rows;
}

/**
 * How many endpoints a workspace has, for its cap. Creates of one workspace queue on an
 * advisory lock to the end of the transaction, so two at once cannot both take the last place.
 */
export async function countEndpointsLocked(db: Executor, workspaceId: number): Promise<number> {
  await lockKey(db, `inbox:endpoints:${workspaceId}`);
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_endpoints WHERE workspace_id = ${workspaceId}`.execute(
    db,
  );
  return rows[0]!.n;
}

/** The workspace of each of these endpoints (a deleted one is absent). */
export async function endpointWorkspaces(db: Executor, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{
    id: number;
    workspace_id: number;
  }>`SELECT id, workspace_id FROM webhook_endpoints WHERE id = ANY(${ids}::bigint[])`.execute(db);
  return new Map(rows.map((r) => [Number(r.id), r.workspace_id]));
}

/** Every endpoint id of these workspaces. */
export async function endpointIdsOf(db: Executor, workspaceIds: number[]): Promise<number[]> {
  if (workspaceIds.length === 0) return [];
  const { rows } = await sql<{ id: number }>`SELECT id FROM webhook_endpoints WHERE workspace_id = ANY(${workspaceIds}::int[])`.execute(db);
  return rows.map((r) => Number(r.id));
}
