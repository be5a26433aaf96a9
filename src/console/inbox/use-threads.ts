import { useEffect, useRef, useState } from 'preact/hooks';
import type { Thread } from '../../../packages/client/src/index';
import { errorText, InboxClientError } from '../shared/api';
import { onRealtime, resync } from '../shared/realtime';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { wantContacts } from './contacts';
import { filter, type ListFilter, matches, mergeThreads, orderOf, queryOf, visibleThreads } from './threads';

const PAGE = 25;

/** A thread names its contact; only a contact without a name is read, for an address or handle to show. */
const unnamed = (list: Thread[]) => list.filter((t) => t.contactName === null).map((t) => t.contactId);

/**
 * The list's threads under `f`: one cursor page at a time (`loadMore` reads the next, never
 * all of them), kept live by the realtime socket. New messages re-read the first page (one
 * request however many arrive at once); `thread.updated` moves a thread in or out at once,
 * and `sla.warning` / `sla.breached` (which carry the thread too) redraw its SLA badge.
 * The threads live in `visibleThreads`, which j/k walk.
 */
export function useThreads(f: ListFilter) {
  const s = useStore(session)!;
  const threads = useStore(visibleThreads);
  const [cursor, setCursor] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  // Answers to an older filter's requests are dropped.
  const generation = useRef(0);
  const me = s.user.id;

  /*
   * A page read may answer after an event that changed one of its threads (a refresh asked
   * for just before the thread was resolved), carrying the thread as it was. Events come in
   * commit order, so each thread's newest event is its newest state: a page's copy of a
   * thread whose event came after the page was asked for is replaced by that event's thread
   * (and left out if the event took it out of the list), instead of undoing the change.
   */
  const changed = useRef(new Map<number, { at: number; thread: Thread | null }>());
  const withEvents = (page: readonly Thread[], askedAt: number, f: ListFilter): Thread[] => {
    const out: Thread[] = [];
    for (const t of page) {
      const c = changed.current.get(t.id);
      if (!c || c.at < askedAt) out.push(t);
      else if (c.thread && matches(c.thread, f, me)) out.push(c.thread);
    }
    return out;
  };
  /** A thread as its event (or a read an event asked for) left it; null: gone from this agent's sight. */
  const apply = (id: number, t: Thread | null) => {
    const now = performance.now();
    changed.current.set(id, { at: now, thread: t });
    // A read takes seconds at most: older entries have nothing left to correct.
    if (changed.current.size > 200) for (const [key, c] of changed.current) if (now - c.at > 60_000) changed.current.delete(key);
    const current = filter.get();
    visibleThreads.update((list) =>
      t ? mergeThreads(list, [t], (x) => x.id !== id || matches(t, current, me), orderOf(current)) : list.filter((x) => x.id !== id),
    );
    if (t) wantContacts(unnamed([t]));
  };
  /**
   * An event that names the thread by its id alone (docs/auth.md): it is read again, and a 404
   * (it moved to a team this agent is not in, or to someone else) takes its row away.
   */
  const reread = (id: number) =>
    s.client.thread(id).then(
      (t) => apply(id, t),
      (err: unknown) => {
        if (err instanceof InboxClientError && err.status === 404) apply(id, null);
      },
    );

  /** The filter the rows on screen were read for (a query string), null before any was read. */
  const shownFor = useRef<string | null>(null);

  async function loadFirst(f: ListFilter) {
    const mine = ++generation.current;
    const query = queryOf(f);
    setLoading(true);
    try {
      const askedAt = performance.now();
      const page = await s.client.page<Thread>('/v1/threads', { ...query, limit: PAGE });
      if (mine !== generation.current) return;
      visibleThreads.set(withEvents(page.data, askedAt, f));
      shownFor.current = JSON.stringify(query);
      setCursor(page.meta.nextCursor);
      setError(null);
      wantContacts(unnamed(page.data));
    } catch (err) {
      if (mine !== generation.current) return;
      // Rows read for another filter do not belong under this one: they go. A re-read of the
      // same filter (after a gap of the socket) keeps them, said to be as last read.
      const same = shownFor.current === JSON.stringify(query);
      if (!same) {
        visibleThreads.set([]);
        shownFor.current = null;
        setCursor(undefined);
      }
      setError(
        `${same ? 'Could not refresh the conversations; this is the list as last read.' : 'Could not load the conversations.'} ${errorText(err)}`,
      );
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }

  // Re-read the first page and merge it into what is loaded (new threads, new previews).
  const refresh = useRef<{ timer?: ReturnType<typeof setTimeout>; run: () => void }>({ run: () => undefined });
  refresh.current.run = () => {
    // The rows went with a failed read: the whole first page is read again, not merged in.
    if (shownFor.current !== JSON.stringify(queryOf(f))) return void loadFirst(f);
    const mine = generation.current;
    const askedAt = performance.now();
    s.client
      .page<Thread>('/v1/threads', { ...queryOf(f), limit: PAGE })
      .then((page) => {
        if (mine !== generation.current) return;
        const fresh = withEvents(page.data, askedAt, f);
        visibleThreads.update((current) => mergeThreads(current, fresh, (t) => matches(t, f, me), orderOf(f)));
        wantContacts(unnamed(page.data));
      })
      .catch(() => undefined);
  };
  const refreshSoon = () => {
    if (refresh.current.timer) return;
    refresh.current.timer = setTimeout(() => {
      refresh.current.timer = undefined;
      refresh.current.run();
    }, 100);
  };

  useEffect(() => {
    void loadFirst(f);
  }, [f]);

  useEffect(() => {
    const stop = resync.subscribe(() => void loadFirst(filter.get()));
    return stop;
  }, []);

  useEffect(
    () =>
      onRealtime((event) => {
        // An SLA event carries the thread as its clock left it: the row's badge turns amber or red.
        if (event.type === 'thread.updated' || event.type === 'sla.warning' || event.type === 'sla.breached') {
          if (event.truncated) void reread(event.data.id);
          else apply(event.data.id, event.data);
        } else if (event.type === 'contact.updated') {
          // A renamed contact is renamed on every row of theirs (a thread carries the name).
          const c = event.data;
          visibleThreads.update((list) =>
            list.some((t) => t.contactId === c.id) ? list.map((t) => (t.contactId === c.id ? { ...t, contactName: c.name } : t)) : list,
          );
        } else if (event.type === 'contact.merged') {
          // The merged contact's threads are gone or moved: a moved one comes back with its
          // `thread.updated`, a folded one (deleted without an event) must not stay; the first
          // page is read again for the kept thread's preview.
          const gone = event.data.mergedContactId;
          visibleThreads.update((list) => (list.some((t) => t.contactId === gone) ? list.filter((t) => t.contactId !== gone) : list));
          refreshSoon();
        } else if (event.type === 'contact.erased') {
          // The erased contact's previews are gone on the service: the rows are read again.
          if (visibleThreads.get().some((t) => t.contactId === event.data.contactId)) refreshSoon();
        } else if (event.type === 'message.created') {
          refreshSoon();
        }
      }),
    [me],
  );

  /** The next page, appended. */
  function loadMore() {
    if (!cursor) return;
    const mine = generation.current;
    const askedAt = performance.now();
    s.client
      .page<Thread>('/v1/threads', { ...queryOf(f), limit: PAGE, cursor })
      .then((page) => {
        if (mine !== generation.current) return;
        visibleThreads.update((current) => mergeThreads(current, withEvents(page.data, askedAt, f), () => true, orderOf(f)));
        setCursor(page.meta.nextCursor);
        wantContacts(unnamed(page.data));
      })
      .catch((err: unknown) => setError(errorText(err)));
  }

  return { threads, cursor, loading, error, loadMore };
}
