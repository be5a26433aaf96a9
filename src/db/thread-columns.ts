import type { ThreadsTable } from './types.js';

/**
 * Every column of `threads`, named: a statement prepared once per connection (PREPARED,
 * ./database.ts) must not read `threads.*`, or a migration that adds a column makes PostgreSQL
 * refuse it in every process started before ("cached plan must not change result type").
 * A column added to ThreadsTable and not here fails the type check below.
 */
export const THREAD_COLUMNS = [
  'id',
  'workspace_id',
  'connection_id',
  'contact_id',
  'status',
  'snoozed_until',
  'assignee_id',
  'labels',
  'agent_last_seen_at',
  'unread_count',
  'last_message_at',
  'last_message_preview',
  'last_inbound_at',
  'team_id',
  'conversation_key',
  'priority',
  'sla',
  'sla_due_at',
  'sla_status',
  'away_replied_at',
  'conversation_messages_in',
  'conversation_messages_out',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof ThreadsTable)[];

/** Names every column of ThreadsTable that THREAD_COLUMNS leaves out: none, or this does not compile. */
type Unlisted = Exclude<keyof ThreadsTable, (typeof THREAD_COLUMNS)[number]>;
const everyColumn: [Unlisted] extends [never] ? true : Unlisted = true;
void everyColumn;
