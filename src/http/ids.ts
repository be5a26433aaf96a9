const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` is a UUID; checked before a uuid column is queried with untrusted input. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
