import { sql } from 'kysely';
import { messageIdForms } from '../channels/email-inbound.js';
import { arrayLiteral } from '../db/array-literal.js';
import type { Executor } from '../db/database.js';
import { byKey, type DeliveryEvents, type Resolved } from './apply-plan.js';
import type { NormalisedEvent } from './events.js';

type Event = NormalisedEvent;

/**
 * Mail about the service's own mail, read back from a mailbox (docs/email.md, "Mail about
 * our own mail"): an agent's reply that comes back (the mailbox Cc'd or Bcc'd on it, a folder
 * that holds sent mail too) is no message of a contact and is dropped; a bounce naming a
 * reply of ours, for its contact, fails that reply with the bounce's reason instead of
 * opening a thread. Which mails those are is known only by the replies the connection has
 * sent (or queued), so this asks the database, and only for mails from the mailbox's own
 * address or bounces (rare): a batch of other mail costs no statement.
 */
export async function withoutOwnMail(db: Executor, deliveries: DeliveryEvents[], resolved: Resolved): Promise<DeliveryEvents[]> {
  const asked: { connectionId: number; externalId: string }[] = [];
  const connectionOf = (d: DeliveryEvents, e: Event) =>
    e.type === 'message' ? resolved.connections.get(byKey(d.integrationKey, e.externalAccountId))?.id : undefined;
  for (const d of deliveries)
    for (const e of d.events) {
      const connectionId = connectionOf(d, e);
      if (connectionId === undefined || e.type !== 'message') continue;
      for (const id of ownMailIds(e)) for (const form of messageIdForms(id)) asked.push({ connectionId, externalId: form });
    }
  if (asked.length === 0) return deliveries;
  const { rows } = await sql<{ connection_id: number; external_id: string; to_email: string | null }>`
    SELECT m.connection_id, m.external_id, m.email->'to'->0->>'email' AS to_email FROM messages m
    JOIN unnest(${arrayLiteral(asked.map((a) => a.connectionId))}::bigint[], ${arrayLiteral(asked.map((a) => a.externalId))}::text[])
      AS k(connection_id, external_id) ON m.connection_id = k.connection_id AND m.external_id = k.external_id
    WHERE m.direction = 'outbound'`.execute(db);
  // Each reply's id → the contact it was sent to.
  const sent = new Map(rows.map((r) => [`${r.connection_id}|${r.external_id}`, r.to_email]));
  for (const r of await unrecordedReplies(db, deliveries, connectionOf)) sent.set(`${r.connection_id}|${r.external_id}`, null);
  const ours = (connectionId: number, id: string) => messageIdForms(id).find((form) => sent.has(`${connectionId}|${form}`));
  return deliveries.map((d) => {
    const events = d.events.flatMap((e): Event[] => {
      const connectionId = connectionOf(d, e);
      if (connectionId === undefined || e.type !== 'message') return [e];
      if (ownAddress(e) && ours(connectionId, e.externalMessageId)) return [];
      const failed = e.bounceOf && ours(connectionId, e.bounceOf.externalMessageId);
      if (!failed || !e.bounceOf) return [e];
      // A Cc or Bcc that bounced: the reply reached its contact, and the report is shown.
      const contact = sent.get(`${connectionId}|${failed}`);
      const recipient = e.bounceOf.recipient?.toLowerCase();
      if (recipient && contact && recipient !== contact.toLowerCase()) return [e];
      return [
        {
          type: 'status',
          resolveBy: 'account',
          externalAccountId: e.externalAccountId,
          externalMessageId: failed,
          status: 'failed',
          error: e.bounceOf.error,
          occurredAt: e.occurredAt,
        },
      ];
    });
    return events.length === d.events.length && events.every((e, i) => e === d.events[i]) ? d : { ...d, events };
  });
}

type MessageEvent = Extract<Event, { type: 'message' }>;

/** A mail from the mailbox's own address: the service's own, when it has the id of a reply sent. */
function ownAddress(e: MessageEvent): boolean {
  return e.email?.from.email === e.externalAccountId;
}

function ownMailIds(e: MessageEvent): string[] {
  return [...(ownAddress(e) ? [e.externalMessageId] : []), ...(e.bounceOf ? [e.bounceOf.externalMessageId] : [])];
}

/**
 * The Message-IDs of replies not recorded as sent yet (their send records the id once the
 * mailbox's Sent copy is kept, and a copy Bcc'd to the mailbox can be read before that): an
 * own-address mail's own id, among the replies queued in the thread of the mail it answers
 * (its In-Reply-To and References, each a message of the connection, by index).
 */
async function unrecordedReplies(
  db: Executor,
  deliveries: DeliveryEvents[],
  connectionOf: (d: DeliveryEvents, e: Event) => number | undefined,
): Promise<{ connection_id: number; external_id: string }[]> {
  const refs: { connectionId: number; externalId: string }[] = [];
  const ids = new Set<string>();
  for (const d of deliveries)
    for (const e of d.events) {
      const connectionId = connectionOf(d, e);
      if (connectionId === undefined || e.type !== 'message' || !ownAddress(e) || !e.references?.length) continue;
      for (const form of messageIdForms(e.externalMessageId)) ids.add(form);
      for (const ref of e.references) refs.push({ connectionId, externalId: ref });
    }
  if (refs.length === 0) return [];
  const { rows } = await sql<{ connection_id: number; external_id: string }>`
    SELECT DISTINCT r.connection_id, o.email->>'messageId' AS external_id
    FROM unnest(${arrayLiteral(refs.map((a) => a.connectionId))}::bigint[], ${arrayLiteral(refs.map((a) => a.externalId))}::text[])
      AS k(connection_id, external_id)
    JOIN messages r ON r.connection_id = k.connection_id AND r.external_id = k.external_id
    JOIN messages o ON o.thread_id = r.thread_id AND o.direction = 'outbound' AND o.external_id IS NULL
    WHERE o.email->>'messageId' = ANY(${arrayLiteral([...ids])}::text[])`.execute(db);
  return rows;
}
