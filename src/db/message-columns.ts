import { type RawBuilder, sql } from 'kysely';
import type { MessagesTable } from './types.js';

/**
 * Every column of `messages` that code reads: all but `search_vector`, which only search's
 * WHERE clauses use. A `RETURNING *` or `selectAll()` on messages would send each row's vector
 * too (as long as its text again, formatted by Postgres and parsed by the driver) for nothing:
 * the inbound batch paid that on every message it inserted.
 */
export const MESSAGE_COLUMNS = [
  'id',
  'workspace_id',
  'thread_id',
  'connection_id',
  'direction',
  'external_id',
  'text',
  'status',
  'error',
  'kind',
  'private',
  'author_id',
  'ai',
  'automation',
  'created_at',
  'updated_at',
  'send_claim_token',
  'send_claimed_at',
  'send_attempt',
  'template',
  'mentions',
  'email',
  'html',
  'quoted_text',
] as const satisfies readonly (keyof MessagesTable)[];

/** MESSAGE_COLUMNS as a SQL list, for a `RETURNING` or a select written in SQL; `alias.` before each with an alias. */
export function messageColumnsSql(alias?: string): RawBuilder<unknown> {
  return sql.raw(MESSAGE_COLUMNS.map((c) => (alias ? `${alias}.${c}` : c)).join(', '));
}
