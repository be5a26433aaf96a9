import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage } from '../db/pages.js';
import type { NotificationType } from '../db/types.js';
import type { CursorRequest } from '../http/pagination.js';
import type { NotificationRow } from './notifications.resources.js';

export interface NewNotification {
  workspaceId: number;
  userId: number;
  type: NotificationType;
  threadId: number | null;
  messageId: number | null;
  actorId: number | null;
}

/**
 * Writes notifications in the caller's transaction, one statement however many (an inbound
 * batch's), in the order given; none costs no statement. A deactivated user is told nothing
 * (no row, no socket frame, no e-mail): their threads stay theirs, but they have left.
 */
export async function insertNotifications(db: Executor, rows: NewNotification[], at: Date): Promise<NotificationRow[]> {
  if (rows.length === 0) return [];
  const { rows: inserted } = await sql<NotificationRow>`
    INSERT INTO notifications (workspace_id, user_id, type, thread_id, message_id, actor_id, created_at)
    SELECT w, u, t, th, m, a, ${at}::timestamptz
    FROM unnest(${rows.map((r) => r.workspaceId)}::int[], ${rows.map((r) => r.userId)}::int[], ${rows.map((r) => r.type)}::text[],
                ${rows.map((r) => r.threadId)}::bigint[], ${rows.map((r) => r.messageId)}::bigint[], ${rows.map((r) => r.actorId)}::int[])
      WITH ORDINALITY AS v(w, u, t, th, m, a, n)
    JOIN users ON users.id = v.u AND users.active
    ORDER BY n
    RETURNING *`.execute(db);
  return inserted;
}

/** A user's notifications, newest first, one cursor page; only the unread with `unread`. */
export async function listNotifications(db: Executor, userId: number, unread: boolean, page: CursorRequest) {
  const q = db
    .selectFrom('notifications')
    .selectAll()
    .where('user_id', '=', userId)
    .$if(unread, (q) => q.where('read_at', 'is', null));
  return keysetPage(q, BY_CREATED, page);
}

/** Marks one of the user's notifications read (a read one keeps its time); undefined when it is not theirs. */
export async function markNotificationRead(db: Executor, userId: number, id: number, at: Date) {
  return db
    .updateTable('notifications')
    .set({ read_at: sql`coalesce(read_at, ${at}::timestamptz)` })
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Marks every unread notification of the user read; answers how many. */
export async function markAllNotificationsRead(db: Executor, userId: number, at: Date): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: at })
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
