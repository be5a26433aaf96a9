import { useEffect, useRef, useState } from 'preact/hooks';
import type { ThreadCounts } from '../../../packages/client/src/index';
import { onRealtime, resync } from '../shared/realtime';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import type { ListFilter } from './threads';

/** A burst of thread events (a busy minute, a bulk change) costs one read of the counts. */
export const COUNTS_DEBOUNCE_MS = 500;

/**
 * The number of threads of each tab under the list's other filters (`GET /v1/threads/counts`),
 * read again when the filters or the sort change, after a gap of the socket, and shortly after thread
 * events: an assignment, a new thread or a resolve elsewhere moves the numbers live.
 */
export function useCounts(f: ListFilter): ThreadCounts | null {
  const s = useStore(session)!;
  const [counts, setCounts] = useState<ThreadCounts | null>(null);
  const asked = useRef(0);
  const latest = useRef(f);
  latest.current = f;

  const read = () => {
    const mine = ++asked.current;
    const { status, connectionId, label, contactId, sort } = latest.current;
    // `sort=sla` also narrows the list (only threads with a clock running), so the counts
    // ask for it too: a tab never counts threads its list leaves out.
    s.client
      .threadCounts({
        status,
        connectionId: connectionId ?? undefined,
        label: label ?? undefined,
        contactId: contactId ?? undefined,
        sort: sort === 'sla' ? 'sla' : undefined,
      })
      .then((c) => {
        if (mine === asked.current) setCounts(c);
      })
      .catch(() => undefined);
  };

  useEffect(read, [f.status, f.connectionId, f.label, f.contactId, f.sort, s.client]);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        read();
      }, COUNTS_DEBOUNCE_MS);
    };
    const stopEvents = onRealtime((event) => {
      if (event.type === 'thread.updated' || event.type === 'message.created') soon();
    });
    const stopResync = resync.subscribe(read);
    return () => {
      clearTimeout(timer);
      stopEvents();
      stopResync();
    };
  }, [s.client]);

  return counts;
}
