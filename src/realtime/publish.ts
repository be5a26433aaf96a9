import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** The one Postgres channel every api process LISTENs on for tenant events. */
export const REALTIME_CHANNEL = 'inbox_realtime';

export interface RealtimeEvent {
  /** e.g. `message.created`, `message.updated`, `thread.updated`, `session.revoked`. */
  type: string;
  workspaceId: number;
  /** When set, only this user's sockets receive the event. */
  targetUserId?: number;
  data: Record<string, unknown>;
  /** Set when the event was cut down to fit a NOTIFY: `data` then holds only ids. */
  truncated?: true;
}

/**
 * Publishes a tenant event through NOTIFY. Called with a transaction, the event is sent
 * only if and when that transaction commits, so a listener never sees a rolled-back write.
 * Payloads must stay small (Postgres caps NOTIFY at 8000 bytes): send ids and the few
 * fields a UI needs, not whole bodies.
 */
export async function publishEvent(db: Executor, event: RealtimeEvent): Promise<void> {
  await sql`SELECT pg_notify(${REALTIME_CHANNEL}, ${JSON.stringify(event)})`.execute(db);
}

/** Publishes many events with one statement (the worker's batches); same commit rule. */
export async function publishEvents(db: Executor, events: RealtimeEvent[]): Promise<void> {
  if (events.length === 0) return;
  await sql`SELECT pg_notify(${REALTIME_CHANNEL}, e) FROM unnest(${events.map((e) => JSON.stringify(e))}::text[]) AS e`.execute(db);
}
