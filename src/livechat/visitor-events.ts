import { sql } from 'kysely';
import type { VisitorBus } from '../channels/livechat.js';
import type { Executor } from '../db/database.js';

/**
 * The Postgres channel of live chat visitors' sockets: every api process LISTENs on it and
 * hands each event to the sockets it holds of that visitor. Separate from the tenant bus
 * (`inbox_realtime`), whose events go to agents.
 */
export const VISITOR_CHANNEL = 'inbox_livechat';

/**
 * A change a visitor's socket must show: an agent's reply to hand over (`message.created`),
 * or a status change of one (`message.updated`). Only ids travel: the process holding the
 * socket reads the message itself, so no text is bounded by NOTIFY's 8000 bytes.
 */
export interface VisitorEvent {
  type: 'message.created' | 'message.updated';
  /** The visitor's handle on the livechat channel (livechat_visitors.handle). */
  visitor: string;
  messageId: number;
}

/** An agent blocked the visitor: every process closes its sockets (see block-visitor.service.ts). */
export interface VisitorBlocked {
  type: 'visitor.blocked';
  visitor: string;
}

/**
 * Publishes through NOTIFY. Called with a transaction, the events go out only if and when it
 * commits; called with the pool, at once.
 */
export async function publishVisitorEvents(db: Executor, events: (VisitorEvent | VisitorBlocked)[]): Promise<void> {
  if (events.length === 0) return;
  await sql`SELECT pg_notify(${VISITOR_CHANNEL}, e) FROM unnest(${events.map((e) => JSON.stringify(e))}::text[]) AS e`.execute(db);
}

/**
 * Publishes a reply's event to every visitor of its thread: the one the sender names and any
 * other whose token now leads to the same contact on the same widget (two visitors become one
 * contact when an agent merges them, and each keeps its token and its sockets).
 */
export async function publishToThreadVisitors(db: Executor, type: VisitorEvent['type'], messageId: number, visitor: string): Promise<void> {
  await sql`
    SELECT pg_notify(${VISITOR_CHANNEL}, json_build_object('type', ${type}::text, 'visitor', h.handle, 'messageId', ${messageId}::bigint)::text)
    FROM (
      SELECT ${visitor}::text AS handle
      UNION
      SELECT v.handle FROM messages m
      JOIN threads t ON t.id = m.thread_id
      JOIN livechat_visitors v ON v.contact_id = t.contact_id AND v.connection_id = t.connection_id
      WHERE m.id = ${messageId}
    ) AS h`.execute(db);
}

/**
 * Live chat's bus for senders: the reply is announced at once, before its outcome commits, so
 * whichever api process holds a socket of one of the thread's visitors takes it now. That
 * process reads the message and marks it `delivered` (from `queued` or `sent`, whichever it
 * finds); the sender's `sent` is then written only if it is still `queued`, so the two orders
 * end the same.
 */
export function visitorBus(db: Executor): VisitorBus {
  return { offer: ({ visitor, messageId }) => publishToThreadVisitors(db, 'message.created', messageId, visitor) };
}
