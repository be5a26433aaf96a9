import type { Thread, ThreadStatus } from '../../../packages/client/src/index';
import { createStore } from '../shared/store';

/** What the list shows: the view (tab), the status, and the optional channel and label filters. */
export type View = 'mine' | 'unassigned' | 'all';

export interface ListFilter {
  view: View;
  status: ThreadStatus;
  connectionId: number | null;
  label: string | null;
  contactId: number | null;
  /** `sla`: the nearest SLA due time first, only threads with a clock running (docs/sla.md). */
  sort: 'recent' | 'sla';
}

/** The tab the agent chose last, kept in this browser across reloads and sign-ins. */
const VIEW_KEY = 'inbox.view';
const VIEWS: readonly View[] = ['mine', 'unassigned', 'all'];

function storedView(): View {
  const v = localStorage.getItem(VIEW_KEY);
  return VIEWS.includes(v as View) ? (v as View) : 'all';
}

export const filter = createStore<ListFilter>({
  view: storedView(),
  status: 'open',
  connectionId: null,
  label: null,
  contactId: null,
  sort: 'recent',
});
filter.subscribe((f) => localStorage.setItem(VIEW_KEY, f.view));

/** The threads the list shows now, in order: j/k walk it. */
export const visibleThreads = createStore<readonly Thread[]>([]);

/** Whether a thread (as an event announces it) belongs in the list under `f`. */
export function matches(t: Thread, f: ListFilter, me: number): boolean {
  if (t.status !== f.status) return false;
  if (f.view === 'mine' && t.assigneeId !== me) return false;
  if (f.view === 'unassigned' && t.assigneeId !== null) return false;
  if (f.connectionId !== null && t.connectionId !== f.connectionId) return false;
  if (f.label !== null && !t.labels.includes(f.label)) return false;
  if (f.contactId !== null && t.contactId !== f.contactId) return false;
  if (f.sort === 'sla' && dueOf(t) === null) return false;
  return true;
}

/** The nearest running SLA due time of a thread, as `?sort=sla` orders by. */
const dueOf = (t: Thread) =>
  [t.sla?.firstResponseDueAt, t.sla?.nextResponseDueAt, t.sla?.resolutionDueAt].filter((d): d is string => !!d).sort()[0] ?? null;

/** Most recently active first, as the service pages them. */
export const byActivity = (a: Thread, b: Thread) => b.lastMessageAt.localeCompare(a.lastMessageAt) || b.id - a.id;
/** The nearest SLA due time first (`?sort=sla`). */
const byDue = (a: Thread, b: Thread) => (dueOf(a) ?? '').localeCompare(dueOf(b) ?? '') || a.id - b.id;
export const orderOf = (f: ListFilter) => (f.sort === 'sla' ? byDue : byActivity);

export function queryOf(f: ListFilter): Record<string, string | number | undefined> {
  return {
    status: f.status,
    assigneeId: f.view === 'mine' ? 'me' : f.view === 'unassigned' ? 'none' : undefined,
    connectionId: f.connectionId ?? undefined,
    label: f.label ?? undefined,
    contactId: f.contactId ?? undefined,
    sort: f.sort === 'sla' ? 'sla' : undefined,
  };
}

/** Merges fresh threads into the loaded ones: same id replaced, new ones added, order kept. */
export function mergeThreads(
  current: readonly Thread[],
  fresh: readonly Thread[],
  keep: (t: Thread) => boolean,
  order: (a: Thread, b: Thread) => number = byActivity,
): Thread[] {
  const byId = new Map(current.map((t) => [t.id, t]));
  for (const t of fresh) byId.set(t.id, t);
  return [...byId.values()].filter(keep).sort(order);
}
