import type { Thread } from '../../../packages/client/src/index';
import { contactName, contacts, wantContacts } from '../inbox/contacts';
import { onRealtime } from '../shared/realtime';
import { session } from '../shared/session';
import { createStore } from '../shared/store';

/** The conversations notifications name, read once each: the bell shows the contact's name. */
export const namedThreads = createStore<ReadonlyMap<number, Thread>>(new Map());
const asked = new Set<number>();

export function wantThreadNames(ids: (number | null)[]): void {
  const client = session.get()?.client;
  if (!client) return;
  for (const id of new Set(ids)) {
    if (id === null || asked.has(id)) continue;
    asked.add(id);
    client
      .thread(id)
      .then((t) => {
        if (t.contactName === null) wantContacts([t.contactId]);
        namedThreads.update((m) => new Map(m).set(id, t));
      })
      // A thread the agent may no longer see (another team's now) keeps a generic name.
      .catch(() => undefined);
  }
}

/** The contact's name of a thread, or "Conversation 42" until it is known. */
export function threadName(id: number): string {
  const t = namedThreads.get().get(id);
  if (!t) return `Conversation ${id}`;
  return t.contactName ?? contactName(contacts.get().get(t.contactId), t.contactId);
}

session.subscribe((s) => {
  if (!s) {
    asked.clear();
    namedThreads.set(new Map());
  }
});

/** A contact renamed (a thread carries its contact's name) renames the notifications about them. */
onRealtime((event) => {
  if (event.type !== 'contact.updated') return;
  const c = event.data;
  const known = namedThreads.get();
  if (![...known.values()].some((t) => t.contactId === c.id && t.contactName !== c.name)) return;
  namedThreads.set(new Map([...known].map(([id, t]) => [id, t.contactId === c.id ? { ...t, contactName: c.name } : t])));
  // A name taken away: the contact's address or handle names them, as on first read.
  if (c.name === null) wantContacts([c.id]);
});
