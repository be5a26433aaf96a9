import { CompiledQuery, sql } from 'kysely';
import type pg from 'pg';
import { arrayLiteral } from './array-literal.js';
import { type Executor, PREPARED } from './database.js';

/**
 * Transaction-scoped advisory locks on text keys: the one way the service makes two
 * transactions take turns over something that is not a row (a contact's handles, a
 * workspace's routing, an idempotency key, a rate bucket). A key names its resource
 * (`inbox:rate:<bucket>`); the lock is held until the transaction ends.
 *
 * Keys are taken in the order of their text (`ORDER BY k`; PostgreSQL takes each lock after
 * the sort, as the function is volatile), so two transactions that want overlapping keys queue
 * instead of deadlocking, whichever order each caller listed them in. One prepared statement
 * for any number of keys: the delivery batch takes its contacts' keys with it.
 */
export async function lockKeys(db: Executor, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`${PREPARED} SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest(${arrayLiteral(keys)}::text[]) AS k ORDER BY k`.execute(
    db,
  );
}

/** lockKeys for one key. */
export function lockKey(db: Executor, key: string): Promise<void> {
  return lockKeys(db, [key]);
}

/** Takes the key's lock if no other transaction holds it; false (without waiting) if one does. */
export async function tryLockKey(db: Executor, key: string): Promise<boolean> {
  const { rows } = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS ok`.execute(db);
  return rows[0]!.ok;
}

/**
 * Session-level locks, held until unlocked or until their connection ends (with its process):
 * for a holder that outlives transactions (a mailbox's reader, a partition's preparation that
 * builds an index CONCURRENTLY). `db` is one connection, a Kysely one or a pg client, never a
 * pool: the unlock must run where the lock was taken.
 */
export async function tryLockKeyForSession(db: Executor | pg.ClientBase, key: string): Promise<boolean> {
  const rows = await onConnection<{ ok: boolean }>(db, 'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok', key);
  return rows[0]?.ok === true;
}

/** Ends a session-level lock this connection holds (see tryLockKeyForSession). */
export async function unlockKeyForSession(db: Executor | pg.ClientBase, key: string): Promise<void> {
  await onConnection(db, 'SELECT pg_advisory_unlock(hashtextextended($1, 0))', key);
}

async function onConnection<R>(db: Executor | pg.ClientBase, text: string, key: string): Promise<R[]> {
  if ('executeQuery' in db) return (await db.executeQuery<R>(CompiledQuery.raw(text, [key]))).rows;
  return (await db.query(text, [key])).rows as R[];
}

/** The lock key of one contact handle: the worker and a merge or erasure take the same. */
export function handleLockKey(workspaceId: number, integrationKey: string, externalId: string): string {
  return `${workspaceId}|${integrationKey}|${externalId}`;
}
