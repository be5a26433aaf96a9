import { sql } from 'kysely';
import { lockKeys } from '../db/advisory-locks.js';
import { arrayLiteral } from '../db/array-literal.js';
import type { Executor } from '../db/database.js';
import { truncate } from '../text/truncate.js';
import type { MessageRow } from './announcements.js';
import { applyStatuses, PROVIDER_ERROR_MAX_LENGTH, type StatusInput } from './messaging.queries.js';

/**
 * Receipts that arrive before their send is recorded (docs/webhooks.md, "Receipts").
 *
 * A batch of sends records its outcomes in one transaction once its slowest provider has
 * answered, so a fast provider's `delivered` or `read` can be processed while the reply still
 * has no provider id: it named no message and was lost, and the reply stayed `sent` for good.
 * Such a receipt is now kept (`early_receipts`, an hour at most) and applied by the
 * transaction that records the send. Both sides take the receipt's lock (its integration and
 * provider id) before they look at the other's rows, so whichever commits second sees what
 * the first wrote: a receipt is either applied at once or kept for the send, never neither.
 */

/** A receipt as its delivery gave it: the account is the one the delivery named, if any. */
export interface Receipt {
  integrationKey: string;
  /** Only a message sent from this account takes the receipt; null: any of the integration's. */
  account: string | null;
  externalId: string;
  status: StatusInput['status'];
  error: string | null;
}

/** A send just recorded: the provider id it got, and where it went out from. */
export interface RecordedSend {
  connectionId: number;
  integrationKey: string;
  account: string;
  externalId: string;
}

const STATUS_RANK = { sent: 1, delivered: 2, read: 3 } as const;

/** Of two receipts for one message, the one that moves it furthest (see applyStatuses). */
export function strongest<R extends { status: StatusInput['status'] }>(a: R | undefined, b: R): R {
  if (!a) return b;
  if (a.status === 'failed' || b.status === 'failed') {
    const other = a.status === 'failed' ? b : a;
    // `failed` only counts before delivery; a delivered or read receipt outranks it.
    return other.status === 'delivered' || other.status === 'read' ? other : a.status === 'failed' ? a : b;
  }
  return STATUS_RANK[b.status] > STATUS_RANK[a.status] ? b : a;
}

const lockKey = (integrationKey: string, externalId: string) => `receipt|${integrationKey}|${externalId}`;

/**
 * Applies receipts whose message the batch did not find or did not move, else keeps them for
 * their send: under their locks, each is matched again (a send may have been recorded since the
 * batch looked); the ones that match are applied, the rest kept. Returns the messages moved.
 */
export async function keepEarlyReceipts(db: Executor, receipts: Receipt[], at: Date): Promise<MessageRow[]> {
  if (receipts.length === 0) return [];
  await lockKeys(
    db,
    receipts.map((r) => lockKey(r.integrationKey, r.externalId)),
  );
  const { rows } = await sql<{ i: string; connection_id: number | null }>`
    SELECT v.i, (
      SELECT m.connection_id FROM messages m JOIN connections c ON c.id = m.connection_id
      WHERE m.external_id = v.external_id AND m.direction = 'outbound' AND c.integration_key = v.integration_key
        AND (v.account IS NULL OR c.external_account_id = v.account)
      LIMIT 1
    ) AS connection_id
    FROM unnest(${arrayLiteral(receipts.map((r) => r.integrationKey))}::text[], ${arrayLiteral(receipts.map((r) => r.externalId))}::text[],
                ${arrayLiteral(receipts.map((r) => r.account))}::text[]) WITH ORDINALITY AS v(integration_key, external_id, account, i)`.execute(
    db,
  );
  const known = new Map<string, StatusInput>();
  const early: Receipt[] = [];
  for (const row of rows) {
    const r = receipts[Number(row.i) - 1]!;
    if (row.connection_id === null) {
      // The send's own outcome will say `sent`: only what comes after it is worth keeping.
      if (r.status !== 'sent') early.push(r);
      continue;
    }
    const key = `${row.connection_id}|${r.externalId}`;
    known.set(
      key,
      strongest(known.get(key), { connectionId: Number(row.connection_id), externalId: r.externalId, status: r.status, error: r.error }),
    );
  }
  if (early.length > 0) {
    await sql`
      INSERT INTO early_receipts (integration_key, external_message_id, account, status, error, received_at)
      SELECT v.integration_key, v.external_id, v.account, v.status, v.error, ${at}
      FROM unnest(${arrayLiteral(early.map((r) => r.integrationKey))}::text[], ${arrayLiteral(early.map((r) => r.externalId))}::text[],
                  ${arrayLiteral(early.map((r) => r.account))}::text[], ${arrayLiteral(early.map((r) => r.status))}::text[],
                  ${arrayLiteral(early.map((r) => (r.error === null ? null : truncate(r.error, PROVIDER_ERROR_MAX_LENGTH))))}::text[])
        AS v(integration_key, external_id, account, status, error)`.execute(db);
  }
  return applyStatuses(db, [...known.values()], at);
}

/**
 * Applies, in the transaction that records them, the receipts kept for `sends` (see
 * keepEarlyReceipts), and deletes them. Returns the messages they moved on.
 */
export async function takeEarlyReceipts(db: Executor, sends: RecordedSend[], at: Date): Promise<MessageRow[]> {
  if (sends.length === 0) return [];
  await lockKeys(
    db,
    sends.map((s) => lockKey(s.integrationKey, s.externalId)),
  );
  const { rows } = await sql<{ connection_id: number; external_message_id: string; status: StatusInput['status']; error: string | null }>`
    DELETE FROM early_receipts AS r
    USING unnest(${sends.map((s) => s.connectionId)}::bigint[], ${arrayLiteral(sends.map((s) => s.integrationKey))}::text[],
                 ${arrayLiteral(sends.map((s) => s.externalId))}::text[], ${arrayLiteral(sends.map((s) => s.account))}::text[])
      AS s(connection_id, integration_key, external_id, account)
    WHERE r.integration_key = s.integration_key AND r.external_message_id = s.external_id AND (r.account IS NULL OR r.account = s.account)
    RETURNING s.connection_id, r.external_message_id, r.status, r.error`.execute(db);
  if (rows.length === 0) return [];
  const best = new Map<string, StatusInput>();
  for (const r of rows) {
    const key = `${r.connection_id}|${r.external_message_id}`;
    best.set(
      key,
      strongest(best.get(key), {
        connectionId: Number(r.connection_id),
        externalId: r.external_message_id,
        status: r.status,
        error: r.error,
      }),
    );
  }
  return applyStatuses(db, [...best.values()], at);
}
