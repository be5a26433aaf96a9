import { sql } from 'kysely';
import { lockKey } from '../db/advisory-locks.js';
import type { Executor } from '../db/database.js';
import { wellFormedJson } from '../text/well-formed.js';

/**
 * Idempotency keys: the first answer to a request that carried `Idempotency-Key`, kept a day
 * (maintenance prunes them) and replayed for a retry of the same request. Keys live in a key
 * space (an app id, or a reserved space) so two tenants never share one.
 */

/** Serialises requests with the same key in one space until the caller's transaction ends. */
export async function lockIdempotencyKey(db: Executor, space: string, key: string): Promise<void> {
  await lockKey(db, `idem:${space}:${key}`);
}

/** How long a key answers its first answer again (docs/replies.md); maintenance prunes it after. */
export const IDEMPOTENCY_KEY_LIFETIME = '24 hours';
const KEY_LIFETIME = sql<Date>`now() - ${IDEMPOTENCY_KEY_LIFETIME}::interval`;

/** The stored answer of a key used in the last 24 hours; an older key is a new request. */
export async function findIdempotentResponse(db: Executor, space: string, key: string) {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('app_id', '=', space)
    .where('key', '=', key)
    .where('created_at', '>', KEY_LIFETIME)
    .executeTakeFirst();
}

export async function saveIdempotentResponse(
  db: Executor,
  row: { space: string; key: string; request: string; statusCode: number; response: unknown },
): Promise<void> {
  await db
    .insertInto('idempotency_keys')
    .values({ app_id: row.space, key: row.key, request: row.request, status_code: row.statusCode, response: wellFormedJson(row.response) })
    // A key older than its lifetime may still be there until maintenance prunes it: the new
    // answer takes its place (the caller holds the key's lock, so nothing else writes it).
    .onConflict((oc) =>
      oc.columns(['app_id', 'key']).doUpdateSet((eb) => ({
        request: eb.ref('excluded.request'),
        status_code: eb.ref('excluded.status_code'),
        response: eb.ref('excluded.response'),
        created_at: sql<Date>`now()`,
      })),
    )
    .execute();
}
