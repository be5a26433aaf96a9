import { useEffect, useState } from 'preact/hooks';
import type { Contact, Message } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { shortTime } from '../shared/format';
import { onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { contactName } from './contacts';

/** Messages (full-text, newest first) and contacts (name, e-mail, handle) matching the search box. */
export function SearchResults({ query, onContact }: { query: string; onContact: (contactId: number) => void }) {
  const s = useStore(session)!;
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [people, setPeople] = useState<Contact[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    const timer = setTimeout(() => {
      Promise.all([
        s.client.page<Message>('/v1/messages/search', { q: query, limit: 20 }),
        s.client.page<Contact>('/v1/contacts', { q: query, limit: 10 }),
      ])
        .then(([m, c]) => {
          if (!live) return;
          setMessages(m.data);
          setPeople(c.data);
          setError(null);
        })
        .catch((err: unknown) => live && setError(errorText(err)));
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, s.client]);

  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!messages) return <p class="empty">Searching…</p>;
  return (
    <div class="search-results">
      <h2 class="section-title">Contacts</h2>
      <ul class="hits" aria-label="Matching contacts">
        {people.length === 0 && <li class="empty">No contact matches.</li>}
        {people.map((c) => (
          <li key={c.id}>
            <button type="button" class="hit" onClick={() => onContact(c.id)}>
              {contactName(c, c.id)}
              <span class="hit-sub">{c.handles.map((h) => h.externalId).join(', ')}</span>
            </button>
          </li>
        ))}
      </ul>
      <h2 class="section-title">Messages</h2>
      <ul class="hits" aria-label="Matching messages">
        {messages.length === 0 && <li class="empty">No message matches.</li>}
        {messages.map((m) => (
          <li key={m.id}>
            <a class="hit" href={`/app/c/${m.threadId}`} onClick={(e) => onLinkClick(e, `/c/${m.threadId}`)}>
              {m.text}
              <span class="hit-sub">{shortTime(m.createdAt)}</span>
            </a>
          </li>
        ))}
      </ul>
    </div>
  );
}
