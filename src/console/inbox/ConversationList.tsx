import { useEffect, useRef, useState } from 'preact/hooks';
import type { Connection, Label, Thread } from '../../client/client';
import { errorText } from '../shared/api';
import { channelName, shortTime } from '../shared/format';
import { onRealtime, resync } from '../shared/realtime';
import { navigate, onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { contactName, contacts, wantContacts } from './contacts';
import { SearchResults } from './SearchResults';
import { filter, type ListFilter, matches, mergeThreads, queryOf, type View, visibleThreads } from './threads';

const PAGE = 25;
const TABS: [View, string][] = [
  ['mine', 'Mine'],
  ['unassigned', 'Unassigned'],
  ['all', 'All'],
];
const STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;

/** A thread names its contact; only a contact without a name is read, for an address or handle to show. */
const unnamed = (list: Thread[]) => list.filter((t) => t.contactName === null).map((t) => t.contactId);

/**
 * The conversation list: one cursor page at a time (more as the end scrolls into view, never
 * all of them), kept live by the realtime socket. New messages re-read the first page (one
 * request however many arrive at once); `thread.updated` moves a thread in or out at once.
 */
export function ConversationList({ selectedId }: { selectedId: number | null }) {
  const s = useStore(session)!;
  const f = useStore(filter);
  const names = useStore(contacts);
  const threads = useStore(visibleThreads);
  const [cursor, setCursor] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [query, setQuery] = useState('');
  const [connections, setConnections] = useState<Connection[]>([]);
  const [labels, setLabels] = useState<Label[]>([]);
  const sentinel = useRef<HTMLLIElement>(null);
  const generation = useRef(0);
  const me = s.user.id;

  async function loadFirst(f: ListFilter) {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const page = await s.client.page<Thread>('/v1/threads', { ...queryOf(f), limit: PAGE });
      if (mine !== generation.current) return;
      visibleThreads.set(page.data);
      setCursor(page.meta.nextCursor);
      setError(null);
      wantContacts(unnamed(page.data));
    } catch (err) {
      if (mine === generation.current) setError(errorText(err));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }

  // Re-read the first page and merge it into what is loaded (new threads, new previews).
  const refresh = useRef<{ timer?: ReturnType<typeof setTimeout>; run: () => void }>({ run: () => undefined });
  refresh.current.run = () => {
    const mine = generation.current;
    s.client
      .page<Thread>('/v1/threads', { ...queryOf(f), limit: PAGE })
      .then((page) => {
        if (mine !== generation.current) return;
        visibleThreads.update((current) => mergeThreads(current, page.data, (t) => matches(t, f, me)));
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
        if (event.type === 'thread.updated') {
          const t = event.data;
          const current = filter.get();
          visibleThreads.update((list) => mergeThreads(list, [t], (x) => x.id !== t.id || matches(t, current, me)));
          wantContacts(unnamed([t]));
        } else if (event.type === 'message.created') {
          refreshSoon();
        }
      }),
    [me],
  );

  useEffect(() => {
    s.client
      .page<Connection>('/v1/connections', { limit: 100 })
      .then((p) => setConnections(p.data))
      .catch(() => undefined);
    s.client
      .labels()
      .then(setLabels)
      .catch(() => undefined);
  }, [s.client]);

  // The next page when the end of the list scrolls into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !cursor) return;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      observer.disconnect();
      const mine = generation.current;
      s.client
        .page<Thread>('/v1/threads', { ...queryOf(f), limit: PAGE, cursor })
        .then((page) => {
          if (mine !== generation.current) return;
          visibleThreads.update((current) => mergeThreads(current, page.data, () => true));
          setCursor(page.meta.nextCursor);
          wantContacts(unnamed(page.data));
        })
        .catch((err: unknown) => setError(errorText(err)));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [cursor, f]);

  const set = (patch: Partial<ListFilter>) => filter.set({ ...f, ...patch });

  return (
    <section class="list-pane" aria-label="Conversations">
      <div class="list-tools">
        <input
          type="search"
          class="search"
          aria-label="Search messages and contacts"
          placeholder="Search messages and contacts"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
        <div role="tablist" aria-label="Views" class="tabs">
          {TABS.map(([view, name]) => (
            <button
              type="button"
              role="tab"
              key={view}
              aria-selected={f.view === view}
              class={f.view === view ? 'tab active' : 'tab'}
              onClick={() => set({ view })}
            >
              {name}
            </button>
          ))}
        </div>
        <div class="filters">
          <label>
            <span class="sr-only">Status</span>
            <select aria-label="Status" value={f.status} onChange={(e) => set({ status: e.currentTarget.value as ListFilter['status'] })}>
              {STATUSES.map((st) => (
                <option key={st} value={st}>
                  {st[0]!.toUpperCase() + st.slice(1)}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span class="sr-only">Channel</span>
            <select
              aria-label="Channel"
              value={f.connectionId ?? ''}
              onChange={(e) => set({ connectionId: e.currentTarget.value ? Number(e.currentTarget.value) : null })}
            >
              <option value="">All channels</option>
              {connections.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name || channelName(c.integrationKey)}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span class="sr-only">Label</span>
            <select aria-label="Label" value={f.label ?? ''} onChange={(e) => set({ label: e.currentTarget.value || null })}>
              <option value="">All labels</option>
              {labels.map((l) => (
                <option key={l.name} value={l.name}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
        </div>
        {f.contactId !== null && (
          <p class="chip">
            Conversations of{' '}
            {threads.find((t) => t.contactId === f.contactId)?.contactName ?? contactName(names.get(f.contactId), f.contactId)}{' '}
            <button type="button" class="link" onClick={() => set({ contactId: null })}>
              Show all
            </button>
          </p>
        )}
      </div>
      {query.trim() ? (
        <SearchResults
          query={query.trim()}
          onContact={(contactId) => {
            setQuery('');
            set({ contactId });
          }}
        />
      ) : (
        <>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <ul class="threads" aria-label="Conversation list" aria-busy={loading}>
            {threads.map((t) => {
              const name = t.contactName ?? contactName(names.get(t.contactId), t.contactId);
              return (
                <li key={t.id}>
                  <a
                    href={`/app/c/${t.id}`}
                    class={t.id === selectedId ? 'thread selected' : 'thread'}
                    aria-current={t.id === selectedId ? 'page' : undefined}
                    onClick={(e) => onLinkClick(e, `/c/${t.id}`)}
                    data-thread-id={t.id}
                  >
                    <span class="thread-top">
                      <span class="thread-name">{name}</span>
                      <time dateTime={t.lastMessageAt}>{shortTime(t.lastMessageAt)}</time>
                    </span>
                    <span class="thread-bottom">
                      <span class="preview">{t.lastMessagePreview ?? ''}</span>
                      {t.unreadCount > 0 && (
                        <span class="badge" title={`${t.unreadCount} unread`}>
                          {t.unreadCount}
                          <span class="sr-only"> unread</span>
                        </span>
                      )}
                    </span>
                    <span class="thread-meta">
                      {channelName(t.integrationKey)}
                      {t.labels.map((l) => (
                        <span class="label" key={l}>
                          {l}
                        </span>
                      ))}
                    </span>
                  </a>
                </li>
              );
            })}
            {!loading && threads.length === 0 && <li class="empty">No conversations here.</li>}
            {cursor && (
              <li ref={sentinel} class="more">
                Loading more…
              </li>
            )}
          </ul>
        </>
      )}
    </section>
  );
}

export const openThread = (id: number) => navigate(`/c/${id}`);
