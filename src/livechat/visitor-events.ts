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
 * Live chat's bus for senders: the reply is announced at once, before its outcome commits, so
 * whichever api process holds the visitor's socket takes it now. That process reads the message
 * and marks it `delivered` (from `queued` or `sent`, whichever it finds); the sender's `sent` is
 * then written only if it is still `queued`, so the two orders end the same.
 */
export function visitorBus(db: Executor): VisitorBus {
  return { offer: ({ visitor, messageId }) => publishVisitorEvents(db, [{ type: 'message.created', visitor, messageId }]) };
}
