import type { Contact, Notification, TeamUser, Thread } from '../../../packages/client/src/index';
import { session, verifySession } from './session';
import { createStore } from './store';

/**
 * The tab's one `/v1/realtime` socket (docs/auth.md, "The realtime socket"). It reconnects
 * with backoff while signed in; on its first `ready` and after any gap it bumps `resync`, and
 * the list and the open transcript re-read what they show, since events sent while it was
 * not yet there or away are not replayed.
 */
export type RealtimeEvent =
  | { type: 'ready'; data: { userId: number; workspaceId: number } }
  | { type: 'message.created'; data: { id: number; threadId: number; direction: string; kind: string; private: boolean; status: string } }
  | {
      type: 'message.updated';
      data: { id: number; threadId: number; status: string; error: string | null; attachments?: { id: number; status: string }[] };
    }
  | { type: 'thread.updated'; data: Thread; truncated?: undefined }
  /** A target of the thread is near (80 %) or past its due time: `data` is the thread with its new `sla.status`. */
  | { type: 'sla.warning' | 'sla.breached'; data: Thread; truncated?: undefined }
  /**
   * The thread changed, and `data` holds only its id: it was too large to send whole, or it
   * has just moved out of this agent's sight (another team, another assignee; docs/teams.md).
   * Read it again: a 404 says the latter.
   */
  | { type: 'thread.updated' | 'sla.warning' | 'sla.breached'; data: { id: number }; truncated: true }
  | { type: 'notification.created'; data: Notification }
  | { type: 'contact.updated'; data: Contact }
  /** The other contact's threads became `contact`'s; one on a connection where `contact` had a thread was folded into it (deleted). */
  | { type: 'contact.merged'; data: { contact: Contact; mergedContactId: number } }
  /** The contact's words, files and handles are gone: what shows them is read again. */
  | { type: 'contact.erased'; data: { contactId: number } }
  | { type: 'user.updated'; data: TeamUser }
  | { type: 'thread.viewing'; data: { threadId: number; userId: number; typing: boolean } }
  | { type: 'session.revoked' | 'token.revoked'; data: unknown };

export type ConnectionState = 'connecting' | 'open' | 'lost';

export const connection = createStore<ConnectionState>('connecting');
/**
 * Bumped on the socket's first `ready` after the page loaded or the agent signed in, and on
 * its `ready` after a gap: re-read whatever is on screen. The screens read as they open,
 * beside the socket on its way; what was committed after a read and before the service held
 * the socket came on no socket. A screen that opens later reads after `ready`, so only those
 * already open (subscribed) read again.
 */
export const resync = createStore(0);

const listeners = new Set<(event: RealtimeEvent) => void>();
export function onRealtime(listener: (event: RealtimeEvent) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const BACKOFF_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000];

let socket: WebSocket | null = null;
let token: string | null = null;
let attempt = 0;
let retry: ReturnType<typeof setTimeout> | undefined;
/** Whether events may have gone past unseen since the screens read: before the first `ready`, and after a gap. */
let missed = true;

function open(): void {
  const current = session.get();
  clearTimeout(retry);
  if (!current) return;
  token = current.token;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/realtime?token=${encodeURIComponent(token)}`;
  const ws = new WebSocket(url);
  socket = ws;
  if (connection.get() !== 'lost') connection.set('connecting');
  ws.onmessage = (frame) => {
    if (ws !== socket) return;
    let event: RealtimeEvent;
    try {
      event = JSON.parse(String(frame.data)) as RealtimeEvent;
    } catch {
      return;
    }
    if (event.type === 'ready') {
      attempt = 0;
      connection.set('open');
      if (missed) resync.update((n) => n + 1);
      missed = false;
    }
    for (const listener of [...listeners]) listener(event);
  };
  ws.onclose = (close) => {
    if (ws !== socket) return;
    socket = null;
    missed = true;
    if (!session.get()) return;
    if (close.code === 4001) {
      // The token ended: a refresh (its replacement is ready) or the session itself.
      void verifySession().then((live) => {
        if (live && session.get()?.token !== token) open();
        else if (live) later();
      });
      return;
    }
    if (close.code === 1012 && attempt === 0) {
      // The service asks for a re-read (what this user may see changed, or it may have missed
      // events): back at once, not after a "lost" banner. A failed try falls to the backoff.
      open();
      return;
    }
    later();
  };
}

function later(): void {
  connection.set('lost');
  const base = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
  attempt += 1;
  clearTimeout(retry);
  retry = setTimeout(open, base / 2 + Math.random() * base);
}

function close(): void {
  clearTimeout(retry);
  const ws = socket;
  socket = null;
  missed = true;
  ws?.close(1000);
  connection.set('connecting');
}

session.subscribe((s) => {
  if (!s) close();
  // A refreshed token: the service closes the old socket (4001) and onclose opens anew.
  else if (!socket && s.token !== token) open();
});

/** Opens the socket when signed in; called once at start. */
export function startRealtime(): void {
  if (session.get() && !socket) open();
}

// Coming back online is a hint to try now instead of waiting out the backoff.
addEventListener('online', () => {
  if (session.get() && !socket) open();
});
