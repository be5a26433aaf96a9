import { useEffect } from 'preact/hooks';
import { onRealtime } from '../shared/realtime';
import { session } from '../shared/session';
import { createStore } from '../shared/store';

/**
 * Collision (docs/console.md, "Who else is here"): a console showing a thread says so every
 * 10 s (`POST /v1/threads/:id/viewing`), with `typing: true` while the agent writes in it; the
 * others' announcements (`thread.viewing`) are kept per thread and forgotten after 20 s of
 * silence, since nobody says when they leave.
 */
export const VIEWING_EVERY_MS = 10_000;
export const FORGET_AFTER_MS = 20_000;
/** Typing is announced at most this often, and counts as over this long after the last key. */
const TYPING_EVERY_MS = 3_000;

export interface Viewer {
  userId: number;
  typing: boolean;
}

/** Who else is on each thread now, by thread id. */
export const viewers = createStore<ReadonlyMap<number, readonly Viewer[]>>(new Map());
const forget = new Map<string, ReturnType<typeof setTimeout>>();

function set(threadId: number, viewer: Viewer | null, userId: number): void {
  viewers.update((all) => {
    const rest = (all.get(threadId) ?? []).filter((v) => v.userId !== userId);
    const next = viewer ? [...rest, viewer].sort((a, b) => a.userId - b.userId) : rest;
    const copy = new Map(all);
    if (next.length > 0) copy.set(threadId, next);
    else copy.delete(threadId);
    return copy;
  });
}

onRealtime((event) => {
  if (event.type !== 'thread.viewing') return;
  const { threadId, userId, typing } = event.data;
  if (userId === session.get()?.user.id) return;
  set(threadId, { userId, typing }, userId);
  const key = `${threadId}:${userId}`;
  clearTimeout(forget.get(key));
  forget.set(
    key,
    setTimeout(() => {
      forget.delete(key);
      set(threadId, null, userId);
    }, FORGET_AFTER_MS),
  );
});

session.subscribe((s) => {
  if (s) return;
  for (const timer of forget.values()) clearTimeout(timer);
  forget.clear();
  viewers.set(new Map());
});

/** When this console last announced typing, and when the agent last typed, per open thread. */
let lastTypedAt = 0;
let typingSentAt = 0;
let current: number | null = null;
/** Whether the last announcement said typing: the others show "typing…" until the next. */
let saidTyping = false;

function announce(threadId: number, typing: boolean): void {
  const client = session.get()?.client;
  if (!client || document.visibilityState === 'hidden') return;
  if (typing) typingSentAt = Date.now();
  saidTyping = typing;
  // A missed announcement costs nothing: the next comes in 10 s.
  void client.viewing(threadId, typing ? { typing: true } : {}).catch(() => undefined);
}

const typingNow = () => Date.now() - lastTypedAt < TYPING_EVERY_MS;

let pause: ReturnType<typeof setTimeout> | undefined;
/**
 * The composer calls this on each key: the first key after a pause is announced at once, then
 * at most every 3 s while typing goes on; a pause is announced as plain viewing.
 */
export function typed(threadId: number): void {
  if (threadId !== current) return;
  lastTypedAt = Date.now();
  if (Date.now() - typingSentAt >= TYPING_EVERY_MS) announce(threadId, true);
  clearTimeout(pause);
  pause = setTimeout(() => {
    if (current === threadId) announce(threadId, false);
  }, TYPING_EVERY_MS);
}

/**
 * The composer calls this when a message went and left the box empty: the typing is over, so
 * the others stop reading "typing…" now, not at the pause 3 s later while the message is there.
 */
export function stoppedTyping(threadId: number): void {
  if (threadId !== current || !saidTyping) return;
  clearTimeout(pause);
  lastTypedAt = 0;
  typingSentAt = 0;
  announce(threadId, false);
}

/** While the thread is on screen: announced now, every 10 s, and when the tab comes back into view. */
export function useViewing(threadId: number): void {
  useEffect(() => {
    current = threadId;
    lastTypedAt = 0;
    typingSentAt = 0;
    announce(threadId, false);
    const every = setInterval(() => announce(threadId, typingNow()), VIEWING_EVERY_MS);
    const visible = () => {
      if (document.visibilityState === 'visible') announce(threadId, typingNow());
    };
    document.addEventListener('visibilitychange', visible);
    return () => {
      clearInterval(every);
      clearTimeout(pause);
      document.removeEventListener('visibilitychange', visible);
      if (current === threadId) current = null;
    };
  }, [threadId]);
}

/** "Cy", "Cy and Bo", "Cy, Bo and Ada". */
export function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
