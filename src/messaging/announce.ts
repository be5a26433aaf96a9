import type { PgBoss } from 'pg-boss';
import { attachmentsOf } from '../attachments/attachments.queries.js';
import { type Attachment, attachmentResource, contentUrl } from '../attachments/attachments.resources.js';
import type { Config } from '../config.js';
import type { Executor } from '../db/database.js';
import type { Logger } from '../logger.js';
import { queueNotificationMail } from '../notifications/notification-mail.enqueue.js';
import { publishEvents } from '../realtime/publish.js';
import { jsonOnce } from '../text/json-once.js';
import { findSubscriptions, writeOutbox } from '../webhooks-out/outbox.js';
import { announcements, type Change, messageIdsOf, workspaceIdOf } from './announcements.js';

/**
 * What announcing needs: the queue (the outbox's and notification mails' jobs), the public URL
 * (attachments' links), whether system mail is set up, and the log.
 */
export interface Announcer {
  boss: PgBoss;
  config: Pick<Config, 'publicUrl' | 'systemMail'>;
  log: Logger;
}

/**
 * Announces what changed, in the caller's transaction: the realtime events (NOTIFY, sent only
 * if and when it commits) and the outbox's deliveries to subscribed endpoints (committed with
 * the change, or not at all). The one way a message change is told to anyone; what each kind
 * of change says is in ./announcements.ts. The messages' attachments are read here, in one
 * query, as the transaction sees them: so whatever the caller put on a message before
 * announcing it travels with it; a caller that knows some of its messages carry none says
 * so (`bare`), and the common inbound batch reads nothing. Every outbound event is shaped, with
 * or without an endpoint: the workspace's event log keeps it (`GET /v1/events`). A notification for a user with no socket
 * open is also queued for their next e-mail (../notifications/notification-mail.enqueue.ts).
 */
export async function announce(
  deps: Announcer,
  trx: Executor,
  changes: readonly Change[],
  now: Date,
  options: { bare?: ReadonlySet<number> } = {},
): Promise<void> {
  if (changes.length === 0) return;
  const url = contentUrl(deps.config.publicUrl);
  const attachments = new Map<number, Attachment[]>();
  // `bare`: messages the caller wrote in this transaction with no attachment, none to read.
  const { bare } = options;
  const withFiles = bare ? messageIdsOf(changes).filter((id) => !bare.has(id)) : messageIdsOf(changes);
  for (const [messageId, rows] of await attachmentsOf(trx, withFiles))
    attachments.set(
      messageId,
      rows.map((row) => attachmentResource(row, url)),
    );
  const subscriptions = await findSubscriptions(trx, changes.map(workspaceIdOf));
  const { realtime, outbound } = announcements(changes, attachments);
  // A thread.updated tells sockets and endpoints the same Thread: it is serialised once.
  const serialise = jsonOnce();
  await publishEvents(trx, realtime, serialise);
  await writeOutbox(deps.boss, trx, outbound, now, subscriptions, serialise);
  await queueNotificationMail(
    deps,
    trx,
    changes.flatMap((c) => (c.type === 'notification.created' ? [c.notification] : [])),
    now,
  );
}
