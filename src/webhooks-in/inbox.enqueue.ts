import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { jobsIn } from '../jobs/queue.js';
import { sha256Hex } from '../crypto/hmac.js';
import { uuid7 } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';

/** The webhook-retry queue: every accepted delivery's id, and every scheduled retry. */
export const WEBHOOK_QUEUE = 'webhook-retry';

/** Where a job is written: a Kysely transaction, or a raw client inside one (ingestion). */
export type EnqueueTarget = { trx: Executor } | { client: pg.ClientBase };

const statementNames = new Map<string, string>();

/** pg-boss's insert is the same text every time: prepared once per connection, then reused. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `inbox_enqueue_${sha256Hex(text).slice(0, 16)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * The one way a delivery is queued: at ingestion, on requeue and for a scheduled retry. The
 * jobs join the caller's transaction, so a row and its job commit together or not at all.
 * Job ids are time-ordered (UUIDv7) rather than pg-boss's random default, so the job table's
 * primary key grows at its right edge instead of touching a random index page per job.
 */
export async function enqueueDeliveries(
  boss: PgBoss,
  target: EnqueueTarget,
  items: { id: string; startAfter?: Date }[],
): Promise<void> {
  if (items.length === 0) return;
  const db =
    'client' in target
      ? { executeSql: (text: string, values?: unknown[]) => target.client.query({ name: statementName(text), text, values }) }
      : jobsIn(target.trx);
  await boss.insert(
    WEBHOOK_QUEUE,
    items.map((item) => (item.startAfter ? { id: uuid7(), data: { id: item.id }, startAfter: item.startAfter } : { id: uuid7(), data: { id: item.id } })),
    { db },
  );
}
