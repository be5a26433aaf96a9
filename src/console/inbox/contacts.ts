import type { Contact } from '../../../packages/client/src/index';
import { onRealtime } from '../shared/realtime';
import { session } from '../shared/session';
import { createStore } from '../shared/store';

/**
 * Contacts by id, fetched once each: a thread carries its contact's name, so the list and the
 * transcript read a contact only when it has none (to show an address or handle instead).
 */
export const contacts = createStore<ReadonlyMap<number, Contact>>(new Map());
const inFlight = new Set<number>();

export function wantContacts(ids: number[]): void {
  const client = session.get()?.client;
  if (!client) return;
  for (const id of new Set(ids)) {
    if (contacts.get().has(id) || inFlight.has(id)) continue;
    inFlight.add(id);
    client
      .contact(id)
      .then((c) => contacts.update((m) => new Map(m).set(id, c)))
      .catch(() => undefined)
      .finally(() => inFlight.delete(id));
  }
}

export function contactName(c: Contact | undefined, fallbackId: number): string {
  if (!c) return `Contact ${fallbackId}`;
  return c.name ?? c.email ?? c.handles[0]?.externalId ?? `Contact ${fallbackId}`;
}

session.subscribe((s) => {
  if (!s) contacts.set(new Map());
});

// A contact read before is kept as `contact.updated` leaves it (its name, e-mail or handles shown).
onRealtime((event) => {
  if (event.type === 'contact.updated' && contacts.get().has(event.data.id)) {
    contacts.update((m) => new Map(m).set(event.data.id, event.data));
  } else if (event.type === 'contact.erased' && contacts.get().has(event.data.contactId)) {
    contacts.update((m) => {
      const next = new Map(m);
      next.delete(event.data.contactId);
      return next;
    });
  }
});
