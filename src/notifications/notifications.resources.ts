import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { NotificationsTable, NotificationType } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';

/** The Notification resource (docs/teams.md, "Mentions and notifications") and its mapper. */

export const NOTIFICATION_TYPES = [
  'assigned',
  'mentioned',
  'message',
  'sla_warning',
  'sla_breached',
] as const satisfies readonly NotificationType[];

export const NotificationResource = Type.Object(
  {
    id: Type.Integer(),
    type: StringEnum(NOTIFICATION_TYPES, {
      description:
        'assigned: someone else or routing assigned the thread to you; mentioned: a note names you; message: a contact wrote in a thread assigned to you; sla_warning, sla_breached: a target of your thread',
    }),
    threadId: Nullable(Type.Integer()),
    messageId: Nullable(Type.Integer({ description: 'the message, note or activity line it is about' })),
    actorId: Nullable(Type.Integer({ description: 'the user who caused it; null for contacts, routing and API keys' })),
    createdAt: Timestamp,
    readAt: Nullable(Type.String({ format: 'date-time', description: 'null while unread' })),
  },
  { title: 'Notification' },
);
export type Notification = Static<typeof NotificationResource>;
export type NotificationRow = Selectable<NotificationsTable>;

export function notificationResource(row: NotificationRow): Notification {
  return {
    id: row.id,
    type: row.type,
    threadId: row.thread_id,
    messageId: row.message_id,
    actorId: row.actor_id,
    createdAt: row.created_at.toISOString(),
    readAt: row.read_at === null ? null : row.read_at.toISOString(),
  };
}
