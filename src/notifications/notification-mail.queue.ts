import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { NotificationType } from '../db/types.js';
import type { Deps } from '../deps.js';
import type { QueueDefinition } from '../jobs/queue.js';
import { MailSendError, type SystemMail, type SystemMailer, systemMailer } from '../mail/system-mailer.js';
import { PRODUCT_NAME, renderListMail } from '../mail/templates.js';
import { truncate } from '../text/truncate.js';
import {
  enqueueNotificationMail,
  mailedTypeSql,
  NOTIFICATION_MAIL_QUEUE,
  NOTIFICATION_MAIL_WINDOW_MS,
  type NotificationMailJob,
} from './notification-mail.enqueue.js';

/** Every minute, a sweep mails whoever has notifications waiting and may be mailed again. */
export const NOTIFICATION_MAIL_SWEEP_CRON = '* * * * *';

/** The longest part of a note a mail quotes. */
const QUOTE_LENGTH = 200;

/** A waiting notification with what its mail line says; `mail` false: read or no longer wanted. */
interface Waiting {
  id: number;
  type: NotificationType;
  thread_id: number | null;
  actor_name: string | null;
  contact_name: string | null;
  text: string | null;
  mail: boolean;
}

async function waitingFor(trx: Executor, userId: number): Promise<Waiting[]> {
  const { rows } = await sql<Waiting>`
    SELECT n.id, n.type, n.thread_id, a.name AS actor_name, c.name AS contact_name, m.text,
           (n.read_at IS NULL AND u.active AND ${mailedTypeSql(sql.ref('n.type'), 'u')}) AS mail
    FROM notification_mail_queue q
    JOIN notifications n ON n.id = q.notification_id
    JOIN users u ON u.id = n.user_id
    LEFT JOIN users a ON a.id = n.actor_id
    LEFT JOIN messages m ON m.id = n.message_id
    LEFT JOIN threads t ON t.id = n.thread_id
    LEFT JOIN contacts c ON c.id = t.contact_id
    WHERE q.user_id = ${userId}
    ORDER BY n.id`.execute(trx);
  return rows;
}

/** What one line of the mail says of a notification. */
function lineOf(n: Waiting, publicUrl: string) {
  const conversation = n.contact_name ? `the conversation with ${n.contact_name}` : `conversation #${n.thread_id}`;
  const url = n.thread_id === null ? `${publicUrl}/app/` : `${publicUrl}/app/c/${n.thread_id}`;
  switch (n.type) {
    case 'assigned':
      // No actor: routing, an API key or a rule assigned it; the mail does not guess which.
      return { title: n.actor_name ? `${n.actor_name} assigned you ${conversation}` : `You were assigned ${conversation}`, url };
    case 'mentioned': {
      const text = n.text ?? '';
      const detail = truncate(text, QUOTE_LENGTH) === text ? text : `${truncate(text, QUOTE_LENGTH - 1)}…`;
      return { title: `${n.actor_name ?? 'Someone'} mentioned you in ${conversation}`, ...(detail ? { detail } : {}), url };
    }
    case 'sla_warning':
      return { title: `${capital(conversation)} is close to its SLA target`, url };
    default:
      return { title: `${capital(conversation)} has passed its SLA target`, url };
  }
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export function notificationMail(to: { email: string; workspaceName: string }, waiting: Waiting[], publicUrl: string): SystemMail {
  const items = waiting.map((n) => lineOf(n, publicUrl));
  const subject = items.length === 1 ? items[0]!.title : `${items.length} notifications in ${to.workspaceName}`;
  return renderListMail({
    to: to.email,
    subject,
    workspaceName: to.workspaceName,
    heading: items.length === 1 ? 'While you were away' : `While you were away: ${items.length} things need you`,
    items,
    buttonLabel: 'Open the inbox',
    url: `${publicUrl}/app/`,
    why: `You get this because you had no ${PRODUCT_NAME} window open. At most one such mail comes every 5 minutes; choose which notifications are e-mailed in your profile.`,
  });
}

type Outcome = 'sent' | 'early' | 'busy' | 'none' | 'failed';

/**
 * Mails one user everything waiting for them, if their window allows, under a lock on their
 * row of `notification_mail_times` (another process mailing them is left to it). Too early:
 * a job for when the window opens. A send that fails keeps what waits and starts the window,
 * so a broken server or address is tried again once per window, not in a loop.
 */
export async function mailUser(deps: Deps, mailer: SystemMailer, userId: number): Promise<Outcome> {
  return deps.db.transaction().execute(async (trx) => {
    await sql`INSERT INTO notification_mail_times (user_id) VALUES (${userId}) ON CONFLICT DO NOTHING`.execute(trx);
    const { rows: locked } = await sql<{ sent_at: Date | null }>`
      SELECT sent_at FROM notification_mail_times WHERE user_id = ${userId} FOR UPDATE SKIP LOCKED`.execute(trx);
    if (locked.length === 0) return 'busy';
    const now = deps.now();
    const sentAt = locked[0]!.sent_at;
    const waiting = await waitingFor(trx, userId);
    if (waiting.length === 0) return 'none';
    if (sentAt !== null && sentAt.getTime() + NOTIFICATION_MAIL_WINDOW_MS > now.getTime()) {
      await enqueueNotificationMail(deps.boss, trx, userId, new Date(sentAt.getTime() + NOTIFICATION_MAIL_WINDOW_MS));
      return 'early';
    }
    const done = () =>
      trx
        .deleteFrom('notification_mail_queue')
        .where(
          'notification_id',
          'in',
          waiting.map((n) => n.id),
        )
        .execute();
    const mailed = waiting.filter((n) => n.mail);
    if (mailed.length === 0) {
      await done();
      return 'none';
    }
    const to = await trx
      .selectFrom('users')
      .innerJoin('workspaces', 'workspaces.id', 'users.workspace_id')
      .select(['users.email', 'workspaces.name as workspaceName'])
      .where('users.id', '=', userId)
      .executeTakeFirstOrThrow();
    const started = trx.updateTable('notification_mail_times').set({ sent_at: now }).where('user_id', '=', userId);
    try {
      await mailer.send(notificationMail(to, mailed, deps.config.publicUrl));
    } catch (err) {
      if (!(err instanceof MailSendError)) throw err;
      deps.log.warn({ userId, reason: err.message }, 'notification mail not sent; tried again in 5 minutes');
      await started.execute();
      return 'failed';
    }
    await done();
    await started.execute();
    deps.log.info({ userId, notifications: mailed.length }, 'notification mail sent');
    return 'sent';
  });
}

/** The users with notifications waiting whose window is open at `now`. */
async function usersDue(db: Executor, now: Date): Promise<number[]> {
  const { rows } = await sql<{ user_id: number }>`
    SELECT DISTINCT q.user_id FROM notification_mail_queue q
    LEFT JOIN notification_mail_times t ON t.user_id = q.user_id
    WHERE t.sent_at IS NULL OR t.sent_at <= ${new Date(now.getTime() - NOTIFICATION_MAIL_WINDOW_MS)}
    ORDER BY q.user_id`.execute(db);
  return rows.map((r) => r.user_id);
}

/**
 * `notification-mail`: a job per user (one waiting at a time, the `short` policy), starting
 * when their window opens, plus a sweep every minute for any job lost or run early. Mailing
 * is idempotent: what a mail carried leaves the queue in the same commit.
 */
export const notificationMailQueue: QueueDefinition<NotificationMailJob> = {
  name: NOTIFICATION_MAIL_QUEUE,
  options: {
    policy: 'short',
    retryLimit: 10,
    retryDelay: 5,
    retryBackoff: true,
    retryDelayMax: 300,
    expireInSeconds: 300,
    deleteAfterSeconds: 24 * 3600,
  },
  schedule: NOTIFICATION_MAIL_SWEEP_CRON,
  worker: {
    options: { batchSize: 20, pollingIntervalSeconds: 2 },
    async handle(deps, jobs) {
      // Queued before the mailer was taken away: they wait for it to come back.
      const mailer = systemMailer(deps);
      if (!mailer) return;
      // A sweep's job carries its schedule's data: `{}` (jobs/registry.ts), but null in one
      // queued by a schedule made without data (this version's before the fix).
      const userIds = jobs.map((j) => (j.data as NotificationMailJob | null)?.userId);
      const users = new Set(userIds.filter((id): id is number => typeof id === 'number'));
      if (userIds.includes(undefined)) for (const id of await usersDue(deps.db, deps.now())) users.add(id);
      for (const id of users) await mailUser(deps, mailer, id);
    },
  },
};
