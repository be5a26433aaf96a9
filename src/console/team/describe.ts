import type { Notification as InboxNotification } from '../../../packages/client/src/index';
import { team, userName } from '../shared/team';
import { threadName } from './thread-names';

/** What a notification is about, in words, for the bell's list and the browser's notification. */
export function what(n: InboxNotification): string {
  const actor = n.actorId === null ? null : userName(team.get(), n.actorId);
  switch (n.type) {
    case 'assigned':
      return actor ? `${actor} assigned you` : 'Assigned to you';
    case 'mentioned':
      return actor ? `${actor} mentioned you` : 'You were mentioned';
    case 'message':
      return 'New message';
    case 'sla_warning':
      return 'SLA target near';
    case 'sla_breached':
      return 'SLA target missed';
  }
}

export const threadLabel = (n: InboxNotification) => (n.threadId === null ? '' : threadName(n.threadId));

export function describe(n: InboxNotification): string {
  const where = threadLabel(n);
  return where ? `${what(n)} · ${where}` : what(n);
}
