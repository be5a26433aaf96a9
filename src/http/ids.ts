import { Type } from 'typebox';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID; checked before a uuid column is queried with untrusted input. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/**
 * Path ids, bounded by their column's range: an id Postgres cannot hold is a 422 from the
 * schema, never an out-of-range error from the database (a 500). `integer` columns
 * (workspaces, users) end at 2^31-1; `bigint` ones are read as JS numbers, so they end at 2^53-1.
 */
export const IntId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
export const BigId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
