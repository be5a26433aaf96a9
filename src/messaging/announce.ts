import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import { publishEvents } from '../realtime/publish.js';
import { writeOutbox } from '../webhooks-out/outbox.js';
import { announcements, type Change } from './announcements.js';

/**
 * Announces what changed, in the caller's transaction: the realtime events (NOTIFY, sent only
 * if and when it commits) and the outbox's deliveries to subscribed endpoints (committed with
 * the change, or not at all). The one way a message change is told to anyone; what each kind
 * of change says is in ./announcements.ts.
 */
export async function announce(boss: PgBoss, trx: Executor, changes: readonly Change[], now: Date): Promise<void> {
  if (changes.length === 0) return;
  const { realtime, outbound } = announcements(changes);
  await publishEvents(trx, realtime);
  await writeOutbox(boss, trx, outbound, now);
}
