import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Connection, Thread } from '../../../packages/client/src/index';
import { channelName, shortTime, slaBadge } from '../shared/format';
import { onRealtime } from '../shared/realtime';
import { navigate, onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { useLoad } from '../shared/use-load';
import { useOnVisible } from '../shared/use-on-visible';
import { contactName, contacts } from './contacts';
import { SearchResults } from './SearchResults';
import { filter, type ListFilter, type View } from './threads';
import { useCounts } from './use-counts';
import { useThreads } from './use-threads';

const TABS: [View, string][] = [
  ['mine', 'Mine'],
  ['unassigned', 'Unassigned'],
  ['all', 'All'],
];

const STEP: Record<string, (at: number) => number> = {
  ArrowRight: (at) => (at + 1) % TABS.length,
  ArrowLeft: (at) => (at - 1 + TABS.length) % TABS.length,
  Home: () => 0,
  End: () => TABS.length - 1,
};

/** Arrows, Home and End in the views' tab list: the next view is chosen and takes the focus. */
function tabKey(e: KeyboardEvent, current: View, choose: (view: View) => void) {
  const step = STEP[e.key];
  if (!step) return;
  e.preventDefault();
  const view = TABS[step(TABS.findIndex(([v]) => v === current))]![0];
  choose(view);
  document.getElementById(`view-${view}`)?.focus();
}

const STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;

/** The conversation list: its threads from `useThreads`, the next page as the end scrolls into view. */
const sla = (t: Thread) => slaBadge(t.sla);

export function ConversationList({ selectedId }: { selectedId: number | null }) {
  const s = useStore(session)!;
  const f = useStore(filter);
  const names = useStore(contacts);
  const { threads, cursor, loading, error, loadMore } = useThreads(f);
  const [query, setQuery] = useState('');
  const counts = useCounts(f);
  const connections =
    useLoad(() => s.client.page<Connection>('/v1/connections', { limit: 100 }).then((p) => p.data), [s.client]).data ?? [];
  const labelList = useLoad(() => s.client.labels(), [s.client]);
  const labels = labelList.data ?? [];
  // A label first given to a thread (here or by a colleague) joins the filter at once.
  const known = useRef(labels);
  known.current = labels;
  useEffect(
    () =>
      onRealtime((event) => {
        if (
          event.type === 'thread.updated' &&
          !event.truncated &&
          event.data.labels.some((l) => !known.current.some((k) => k.name === l))
        ) {
          void labelList.reload();
        }
      }),
    [labelList.reload],
  );
  // The SLA badges count down: the rows are drawn again every 30 s while one of them shows a clock.
  const [, tick] = useState(0);
  const timed = threads.some((t) => sla(t) !== null);
  useEffect(() => {
    if (!timed) return;
    const every = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(every);
  }, [timed]);
  const sentinel = useRef<HTMLLIElement>(null);
  useOnVisible(sentinel, loadMore, [cursor, f]);
  // A new message moves its row up: Preact moves the row's element, and the browser takes the
  // focus off an element moved in the page. The row the agent was on gets it back before the
  // next paint, so the keyboard goes on from there.
  const focusedRow = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.threadId : undefined;
  useLayoutEffect(() => {
    if (focusedRow && document.activeElement === document.body) {
      document.querySelector<HTMLElement>(`[data-thread-id="${focusedRow}"]`)?.focus();
    }
  });

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
        {/* A tab list as ARIA has it: Tab enters at the chosen view, arrows (Home, End) choose another. */}
        <div role="tablist" aria-label="Views" class="tabs" onKeyDown={(e) => tabKey(e, f.view, (view) => set({ view }))}>
          {TABS.map(([view, name]) => (
            <button
              type="button"
              role="tab"
              key={view}
              id={`view-${view}`}
              aria-selected={f.view === view}
              tabIndex={f.view === view ? 0 : -1}
              class={f.view === view ? 'tab active' : 'tab'}
              onClick={() => set({ view })}
            >
              {name}
              {counts && counts[view] !== null && <span class="tab-count"> {counts[view]}</span>}
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
            <span class="sr-only">Sort</span>
            <select aria-label="Sort" value={f.sort} onChange={(e) => set({ sort: e.currentTarget.value as ListFilter['sort'] })}>
              <option value="recent">Most recent</option>
              <option value="sla">SLA due first</option>
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
                    onClick={(e) => {
                      onLinkClick(e, `/c/${t.id}`);
                      if (e.defaultPrevented) focusOpened(t.id);
                    }}
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
                      {t.priority !== 'normal' && <span class={`priority priority-${t.priority}`}>{t.priority}</span>}
                      {sla(t) && (
                        <span class={`sla sla-${sla(t)!.status}`} title={t.sla ? `SLA ${t.sla.status}` : undefined}>
                          {sla(t)!.text}
                        </span>
                      )}
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
            {!loading && !error && threads.length === 0 && <li class="empty">No conversations here.</li>}
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

/** Opens a conversation with the focus on its row, so j and k go on from there (see focusOpened). */
export function openThread(id: number) {
  navigate(`/c/${id}`);
  focusOpened(id);
}

/**
 * Where the focus goes once conversation `id` is open: its row where the list shows beside it,
 * else the conversation's title, on a phone-width screen where the list hides while a
 * conversation is open, so the focus is never left on a row nobody can see.
 */
function focusOpened(id: number) {
  requestAnimationFrame(() => {
    const row = document.querySelector<HTMLElement>(`[data-thread-id="${id}"]`);
    if (row && row.getClientRects().length > 0) row.focus();
    else document.getElementById(CONVERSATION_TITLE)?.focus();
  });
}

/** The id of the open conversation's title (Transcript), which takes the focus where the list hides. */
export const CONVERSATION_TITLE = 'conversation-title';

/** Back to the list from a conversation (a phone's "← Conversations"): the focus on the row left. */
export function backToList(id: number) {
  navigate('/');
  requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-thread-id="${id}"]`)?.focus());
}
