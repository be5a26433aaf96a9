import { sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import type { Executor } from '../db/database.js';
import type { NotificationType } from '../db/types.js';
import { jobsIn } from '../jobs/queue.js';
import type { Logger } from '../logger.js';
import { hasOpenSocket } from '../users/users.queries.js';
import type { NotificationRow } from './notifications.resources.js';

/**
 * Notification e-mail (docs/teams.md, "Notification e-mail"): a notification of a type the
 * user has e-mailed, made while none of their sockets is open, waits in
 * `notification_mail_queue` for their next mail; a job per user sends it once their window
 * (one mail per NOTIFICATION_MAIL_WINDOW_MS) allows, carrying everything that waits.
 */

export const NOTIFICATION_MAIL_QUEUE = 'notification-mail';

/** At most one notification mail per user in this long. */
export const NOTIFICATION_MAIL_WINDOW_MS = 5 * 60_000;

/** `userId`: mail this user when their window allows; absent: the sweep (every user whose window allows). */
export interface NotificationMailJob {
  userId?: number;
}

/** The user's setting (a column of users) that says whether a type is e-mailed; others never are. */
export const MAILED_TYPES: Partial<Record<NotificationType, 'notify_email_assigned' | 'notify_email_mentioned' | 'notify_email_sla'>> = {
  assigned: 'notify_email_assigned',
  mentioned: 'notify_email_mentioned',
  sla_warning: 'notify_email_sla',
  sla_breached: 'notify_email_sla',
};

/** Whether the user `u` (an alias of users) has a notification's type `type` (SQL text) e-mailed. */
export const mailedTypeSql = (type: ReturnType<typeof sql.ref>, u: string) => sql<boolean>`CASE ${type}
  ${sql.join(
    Object.entries(MAILED_TYPES).map(([t, column]) => sql`WHEN ${t} THEN ${sql.ref(`${u}.${column}`)}`),
    sql` `,
  )}
  ELSE false END`;

/** What queueing the mails needs: the queue, whether mail is configured, the log. */
export interface MailQueuer {
  boss: PgBoss;
  config: Pick<Config, 'systemMail'>;
  log: Logger;
}

let toldUnconfigured = false;

/** A job for the user that starts when their window allows, joining the caller's commit. */
export async function enqueueNotificationMail(boss: PgBoss, trx: Executor, userId: number, startAfter: Date | undefined) {
  const job: NotificationMailJob = { userId };
  // One waiting job per user (the queue's `short` policy): it mails whatever waits when it runs.
  await boss.send(NOTIFICATION_MAIL_QUEUE, job, {
    db: jobsIn(trx),
    singletonKey: `user:${userId}`,
    ...(startAfter ? { startAfter } : {}),
  });
}

/**
 * Puts the just-made notifications that are to be e-mailed in their users' mail queue and
 * queues each user's job, in the caller's transaction. Costs no statement when none is of an
 * e-mailed type, and nothing at all without a system mailer (said once, at debug).
 */
export async function queueNotificationMail(deps: MailQueuer, trx: Executor, notifications: readonly NotificationRow[], at: Date) {
  const mailed = notifications.filter((n) => MAILED_TYPES[n.type] !== undefined);
  if (mailed.length === 0) return;
  if (!deps.config.systemMail) {
    if (!toldUnconfigured) {
      toldUnconfigured = true;
      deps.log.debug('notification e-mails are off: INBOX_SMTP_URL and INBOX_MAIL_FROM are not set');
    }
    return;
  }
  const { rows } = await sql<{ user_id: number; sent_at: Date | null }>`
    WITH due AS (
      INSERT INTO notification_mail_queue (notification_id, user_id)
      SELECT v.id, v.user_id
      FROM unnest(${mailed.map((n) => n.id)}::bigint[], ${mailed.map((n) => n.user_id)}::int[], ${mailed.map((n) => n.type)}::text[])
        AS v(id, user_id, type)
      JOIN users u ON u.id = v.user_id
      WHERE u.active AND ${mailedTypeSql(sql.ref('v.type'), 'u')} AND NOT ${hasOpenSocket(sql.ref('v.user_id'), at)}
      ON CONFLICT DO NOTHING
      RETURNING user_id
    )
    SELECT DISTINCT d.user_id, t.sent_at FROM due d LEFT JOIN notification_mail_times t ON t.user_id = d.user_id
    ORDER BY d.user_id`.execute(trx);
  for (const r of rows) {
    const opens = r.sent_at === null ? undefined : new Date(r.sent_at.getTime() + NOTIFICATION_MAIL_WINDOW_MS);
    await enqueueNotificationMail(deps.boss, trx, r.user_id, opens && opens > at ? opens : undefined);
  }
}
