import { useEffect, useRef, useState } from 'preact/hooks';
import type { CursorPage, Message, Thread, ThreadPatch } from '../../../packages/client/src/index';
import { errorText, InboxClientError } from '../shared/api';
import { onRealtime, resync } from '../shared/realtime';
import { navigate } from '../shared/router';
import { renewing, session } from '../shared/session';
import { useStore } from '../shared/store';
import { wantContacts } from './contacts';
import { draftOf, saveDraft } from './drafts';

const PAGE = 30;
/** Pages read on after a gap to reach the messages shown; past them the transcript starts over from the newest. */
const CATCH_UP_PAGES = 5;

/** What an open conversation says once it has moved out of the agent's sight (docs/teams.md). */
export const OUT_OF_REACH =
  'This conversation is out of your reach now: it is in a team you are not in, or with someone else. Choose another conversation.';

/** A message that came live, or a reply that just failed: what the transcript announces. */
export interface News {
  key: string;
  message: Message;
  failed: boolean;
}

/** Oldest first for reading; the service pages newest first. */
const inOrder = (list: Iterable<Message>) => [...list].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);

function mergeMessages(current: readonly Message[], fresh: readonly Message[]): Message[] {
  const byId = new Map(current.map((m) => [m.id, m]));
  for (const m of fresh) byId.set(m.id, m);
  return inOrder(byId.values());
}

/**
 * One thread and its transcript: the newest page first, older pages on `loadOlder()`, kept
 * live by the realtime socket and read again after a reconnect. The thread counts as read
 * when it opens, when an inbound message arrives while the tab is visible, and when a
 * reconnect brings messages that came during the gap.
 */
export function useThread(threadId: number) {
  const s = useStore(session)!;
  const [thread, setThread] = useState<Thread | null>(null);
  const threadRef = useRef<Thread | null>(null);
  threadRef.current = thread;
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const messagesRef = useRef<Message[]>([]);
  messagesRef.current = messages;
  /**
   * The thread on screen now. Each render's functions know the thread they were made for: an
   * answer that comes after the agent moved to another conversation is dropped, never shown in
   * that one's transcript or header.
   */
  const openId = useRef(threadId);
  openId.current = threadId;
  const stillOpen = () => openId.current === threadId;
  /**
   * What came live while the thread is open (a new message, a reply that failed), for the
   * transcript's live region: a screen reader hears it without moving there. The last few only.
   */
  const [news, setNews] = useState<News[]>([]);
  const tell = (items: News[]) => items.length > 0 && setNews((list) => [...list, ...items].slice(-5));
  /** Ids of `message.created` events not yet read into the transcript. */
  const liveIds = useRef(new Set<number>());

  const markRead = () => {
    if (document.visibilityState === 'visible') void s.client.markThreadRead(threadId).catch(() => undefined);
  };

  /**
   * Each message's newest `message.updated`, with when it came. A read that set out before
   * the event may answer the older state (a reply still `queued` although the event said
   * `sent`), and the event may come before the read brings the message at all: the read's
   * answer gives way to what came later.
   */
  const updates = useRef(new Map<number, { status: Message['status']; error: string | null; at: number }>());
  const withUpdates = (list: Message[], askedAt: number) =>
    list.map((m) => {
      const later = updates.current.get(m.id);
      return later && later.at > askedAt ? { ...m, status: later.status, error: later.error } : m;
    });

  /**
   * This tab's own changes answer with the thread as they left it, while a read, or the event
   * of an earlier change delayed on the socket, may bring an older state after that answer
   * (a label added, then gone again, and the next removal sent without it). So a read's thread
   * shows only if no answer of this tab's came while it was on its way, and `thread.updated`
   * is a cue to read the thread again, not a state to show.
   */
  const answers = useRef(0);
  const showAnswer = (t: Thread) => {
    answers.current += 1;
    setThread(t);
  };
  async function readThread(current: () => boolean) {
    const before = answers.current;
    const t = await s.client.thread(threadId);
    if (current() && answers.current === before) setThread(t);
  }

  /**
   * After a gap of the socket more may have come than one page holds: pages are read on until
   * they reach the messages shown, so the transcript has no hole in it; past CATCH_UP_PAGES it
   * starts over from the newest (the older ones a scroll away, as when it opened).
   */
  async function catchUp(page: CursorPage<Message>) {
    const shown = new Set(messagesRef.current.map((m) => m.id));
    const reached = (list: readonly Message[]) => shown.size === 0 || list.some((m) => shown.has(m.id));
    let data = page.data;
    let cursor = page.meta.nextCursor;
    for (let n = 1; cursor && !reached(data) && n < CATCH_UP_PAGES; n++) {
      const more = await s.client.page<Message>(`/v1/threads/${threadId}/messages`, { limit: PAGE, cursor });
      data = [...data, ...more.data];
      cursor = more.meta.nextCursor;
    }
    return { data, cursor, startOver: cursor !== undefined && !reached(data) };
  }

  /**
   * Gone from this agent's sight (another team's now, or someone else's): it says so, and shows
   * nothing of it any more, as its address would not (docs/teams.md).
   */
  function outOfReach() {
    setThread(null);
    setMessages([]);
    setOlder(undefined);
    setNews([]);
    setError(OUT_OF_REACH);
  }

  /**
   * Reads of the newest page, numbered as asked. The opening read may answer after a later one
   * (the socket's first `ready` asks for one as the page loads): its older page then merges into
   * what the later one showed, and its thread gives way, instead of taking a message back.
   */
  const reads = useRef({ asked: 0, answered: 0 });

  /** Reads the thread and its newest page; answers the thread as read (undefined when the read failed). */
  async function loadNewest(first: boolean): Promise<Thread | undefined> {
    const askedAt = performance.now();
    const before = answers.current;
    const mine = ++reads.current.asked;
    try {
      const [t, newest] = await Promise.all([
        s.client.thread(threadId),
        s.client.page<Message>(`/v1/threads/${threadId}/messages`, { limit: PAGE }),
      ]);
      const page = first ? { data: newest.data, cursor: newest.meta.nextCursor, startOver: true } : await catchUp(newest);
      if (!stillOpen()) return undefined;
      const overtaken = reads.current.answered > mine;
      reads.current.answered = Math.max(reads.current.answered, mine);
      if (answers.current === before && !overtaken) setThread(t);
      if (t.contactName === null) wantContacts([t.contactId]);
      const fresh = withUpdates(page.data, askedAt);
      // A reply that failed before this read brought it (its event came first) is told here.
      tell(
        inOrder(fresh.filter((m) => liveIds.current.delete(m.id))).flatMap((m) => [
          ...(m.authorId !== s.user.id ? [{ key: `m${m.id}`, message: m, failed: false }] : []),
          ...(m.status === 'failed' ? [{ key: `f${m.id}`, message: m, failed: true }] : []),
        ]),
      );
      setMessages((current) => (page.startOver && !overtaken ? inOrder(fresh) : mergeMessages(current, fresh)));
      if (page.startOver) setOlder(page.cursor);
      setError(null);
      return t;
    } catch (err) {
      if (!stillOpen()) return undefined;
      // Read again (the socket was back, or asked for a re-read) and gone from this agent's
      // sight: said as a move out of it is, with nothing left to act on.
      if (!first && err instanceof InboxClientError && err.status === 404) outOfReach();
      else setError(errorText(err));
      return undefined;
    }
  }

  useEffect(() => {
    setThread(null);
    setMessages([]);
    setOlder(undefined);
    setNews([]);
    liveIds.current.clear();
    updates.current.clear();
    void loadNewest(true).then(markRead);
    // Back after a gap of the socket: what the contact wrote meanwhile is on screen now, so it
    // is read, as a message that arrives while the thread is open is.
    const stopResync = resync.subscribe(() => void loadNewest(false).then((t) => t && t.unreadCount > 0 && markRead()));
    let timer: ReturnType<typeof setTimeout> | undefined;
    let threadTimer: ReturnType<typeof setTimeout> | undefined;
    // A read that answers after the tab moved to another thread is not shown.
    let shown = true;
    const stopEvents = onRealtime((event) => {
      if (event.type === 'message.created' && event.data.threadId === threadId) {
        liveIds.current.add(event.data.id);
        // Coalesced: a burst of messages costs one read.
        timer ??= setTimeout(() => {
          timer = undefined;
          void loadNewest(false).then(() => event.data.direction === 'inbound' && markRead());
        }, 50);
      } else if (event.type === 'message.updated' && event.data.threadId === threadId) {
        const { id, status, error } = event.data;
        updates.current.set(id, { status: status as Message['status'], error, at: performance.now() });
        const shown = messagesRef.current.find((m) => m.id === id);
        if (status === 'failed' && shown && shown.status !== 'failed') {
          tell([{ key: `f${id}`, message: { ...shown, status: 'failed', error }, failed: true }]);
        }
        setMessages((list) => list.map((m) => (m.id === id ? { ...m, status: status as Message['status'], error } : m)));
        void refreshAttachments(id, event.data.attachments ?? []);
      } else if (event.type === 'contact.updated') {
        const c = event.data;
        setThread((t) => (t && t.contactId === c.id ? { ...t, contactName: c.name } : t));
      } else if (event.type === 'contact.merged' && threadRef.current?.contactId === event.data.mergedContactId) {
        void followMerge(threadRef.current, event.data.contact.id, () => shown);
      } else if (event.type === 'contact.erased' && threadRef.current?.contactId === event.data.contactId) {
        // The contact's messages lost their words and files: the transcript is read anew.
        void loadNewest(true);
      } else if (event.type === 'thread.updated' && event.data.id === threadId) {
        // Coalesced like messages: a burst of changes costs one read.
        threadTimer ??= setTimeout(() => {
          threadTimer = undefined;
          void readThread(() => shown).catch((err: unknown) => {
            // Moved out of this agent's sight (the socket named it by its id alone): said so,
            // and nothing left to act on a thread they may no longer see.
            if (shown && err instanceof InboxClientError && err.status === 404) outOfReach();
          });
        }, 50);
      }
    });
    return () => {
      shown = false;
      stopResync();
      stopEvents();
      clearTimeout(timer);
      clearTimeout(threadTimer);
    };
  }, [threadId, s.client]);

  /**
   * The open thread's contact was merged into `into`: the thread became theirs (read again), or
   * was folded into their thread on the same connection and deleted. Then the agent is taken to
   * that thread, with what they were writing, instead of staying in a conversation that is gone.
   */
  async function followMerge(gone: Thread, into: number, current: () => boolean) {
    const page = await s.client
      .page<Thread>('/v1/threads', { contactId: into, connectionId: gone.connectionId, limit: 25 })
      .catch(() => null);
    if (!page || !current()) return;
    // Still there, now the other contact's: its thread.updated has it read again.
    if (page.data.some((t) => t.id === gone.id)) return;
    const kept = page.data[0];
    if (!kept) return;
    const draft = draftOf(gone.id);
    if (draft.text && !draftOf(kept.id).text) saveDraft(kept.id, { ...draft, idempotencyKey: undefined });
    saveDraft(gone.id, { text: '', note: false });
    navigate(`/c/${kept.id}`, { replace: true });
  }

  /**
   * The event names only each file's id and status: a file that changed (stored, failed) is
   * read again for its size, name and error, so a placeholder turns into the image live.
   */
  async function refreshAttachments(messageId: number, announced: { id: number; status: string }[]) {
    const shown = messagesRef.current.find((m) => m.id === messageId)?.attachments ?? [];
    const changed = announced.filter((a) => shown.find((b) => b.id === a.id)?.status !== a.status);
    if (changed.length === 0) return;
    const fresh = await Promise.all(changed.map((a) => s.client.attachments.get(a.id).catch(() => null)));
    const byId = new Map(fresh.flatMap((a) => (a ? [[a.id, a] as const] : [])));
    setMessages((list) =>
      list.map((m) =>
        m.id !== messageId
          ? m
          : {
              ...m,
              attachments: [
                ...m.attachments.map((a) => byId.get(a.id) ?? a),
                ...[...byId.values()].filter((a) => !m.attachments.some((b) => b.id === a.id)),
              ],
            },
      ),
    );
  }

  /** The page before the oldest shown; answers whether one was added. */
  async function loadOlder(): Promise<boolean> {
    if (!older) return false;
    try {
      const page = await s.client.page<Message>(`/v1/threads/${threadId}/messages`, { limit: PAGE, cursor: older });
      if (!stillOpen()) return false;
      setMessages((current) => mergeMessages(current, page.data));
      setOlder(page.meta.nextCursor);
      return true;
    } catch (err) {
      if (stillOpen()) setError(errorText(err));
      return false;
    }
  }

  /** A change from the header (status, assignee), shown as the service answers it; answers whether it was made. */
  async function update(patch: ThreadPatch): Promise<boolean> {
    setBusy(true);
    try {
      const t = await renewing(() => s.client.updateThread(threadId, patch));
      if (stillOpen()) showAnswer(t);
      return true;
    } catch (err) {
      if (stillOpen()) setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  }

  /** A message the agent's own call answered (a summary note): shown without waiting for its event. */
  const added = (m: Message) => {
    if (m.threadId === threadId) setMessages((current) => mergeMessages(current, [m]));
  };

  return { thread, showAnswer, messages, older, error, setError, busy, loadOlder, update, added, news };
}
