import type { Notification as InboxNotification } from '../../../packages/client/src/index';
import { onRealtime, resync } from '../shared/realtime';
import { session } from '../shared/session';
import { createStore } from '../shared/store';
import { alert } from './alerts';
import { wantThreadNames } from './thread-names';

/**
 * The signed-in agent's notifications (docs/console.md, "The bell"): the newest few for the
 * bell's list, and the ids of the unread ones for its count and the tab title. Read when the
 * session starts and after any gap of the socket; `notification.created` (only this user's
 * sockets hear it) adds one live.
 */
export interface Bell {
  recent: readonly InboxNotification[];
  unreadIds: ReadonlySet<number>;
  /** More unread than one page holds: the count reads "100+". */
  more: boolean;
}

const RECENT = 30;
const UNREAD_PAGE = 100;

export const bell = createStore<Bell>({ recent: [], unreadIds: new Set(), more: false });

export const unreadLabel = (b: Bell) => (b.more ? `${b.unreadIds.size}+` : String(b.unreadIds.size));

/**
 * Reads answer out of order (the one at sign-in may come after the one the socket's `ready`
 * asked for), and a read may set out before a `notification.created` it then answers
 * without: only the latest read's answer shows, with what was heard since it was asked.
 */
let asked = 0;
let heard: InboxNotification[] = [];

async function load(): Promise<void> {
  const client = session.get()?.client;
  if (!client) return;
  const mine = ++asked;
  heard = [];
  const [recent, unread] = await Promise.all([
    client.page<InboxNotification>('/v1/notifications', { limit: RECENT }),
    client.page<InboxNotification>('/v1/notifications', { limit: UNREAD_PAGE, unread: 'true' }),
  ]);
  if (mine !== asked) return;
  const late = heard.filter((n) => !recent.data.some((r) => r.id === n.id));
  bell.set({
    recent: [...late, ...recent.data].slice(0, RECENT),
    unreadIds: new Set([...unread.data, ...late.filter((n) => !n.readAt)].map((n) => n.id)),
    more: Boolean(unread.meta.nextCursor),
  });
  wantThreadNames(recent.data.map((n) => n.threadId));
}

const reload = () => void load().catch(() => undefined);

/** Marks one read here at once and on the service; the count comes back if the service refuses. */
export async function markRead(n: InboxNotification): Promise<void> {
  const client = session.get()?.client;
  if (!client || !bell.get().unreadIds.has(n.id)) return;
  const now = new Date().toISOString();
  bell.update((b) => ({
    ...b,
    recent: b.recent.map((r) => (r.id === n.id ? { ...r, readAt: now } : r)),
    unreadIds: new Set([...b.unreadIds].filter((id) => id !== n.id)),
  }));
  await client.readNotification(n.id).catch(reload);
}

export async function markAllRead(): Promise<void> {
  const client = session.get()?.client;
  if (!client) return;
  const now = new Date().toISOString();
  bell.update((b) => ({ recent: b.recent.map((r) => (r.readAt ? r : { ...r, readAt: now })), unreadIds: new Set(), more: false }));
  await client.readAllNotifications().catch(reload);
}

/** "(3) Inbox" while something is unread, else "Inbox". */
function title(b: Bell): void {
  document.title = b.unreadIds.size > 0 ? `(${unreadLabel(b)}) Inbox` : 'Inbox';
}
bell.subscribe(title);

let started = false;
session.subscribe((s) => {
  if (!s) {
    started = false;
    asked += 1;
    heard = [];
    bell.set({ recent: [], unreadIds: new Set(), more: false });
  } else if (!started) {
    started = true;
    reload();
  }
});
resync.subscribe(reload);

onRealtime((event) => {
  if (event.type !== 'notification.created') return;
  const n = event.data;
  // Only a read's worth is kept: a read answers the newest RECENT anyway.
  heard = [...heard, n].slice(-RECENT);
  if (bell.get().recent.some((r) => r.id === n.id)) return;
  bell.update((b) => ({
    ...b,
    recent: [n, ...b.recent].slice(0, RECENT),
    unreadIds: n.readAt ? b.unreadIds : new Set([...b.unreadIds, n.id]),
  }));
  wantThreadNames([n.threadId]);
  alert(n, () => void markRead(n));
});
