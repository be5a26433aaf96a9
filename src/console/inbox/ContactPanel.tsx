import { useEffect, useRef, useState } from 'preact/hooks';
import type { Contact, Thread } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { holdFocus } from '../shared/focus';
import { channelName, shortTime } from '../shared/format';
import { onRealtime } from '../shared/realtime';
import { onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { contacts } from './contacts';

type Value = string | number | boolean;
interface Row {
  key: string;
  value: string;
  /** The type the value had, kept when the edited text still reads as one. */
  was: 'string' | 'number' | 'boolean';
}

const rowsOf = (c: Contact): Row[] =>
  Object.entries(c.attributes).map(([key, v]) => ({ key, value: String(v), was: typeof v as Row['was'] }));

function typedValue(row: Row): Value {
  const text = row.value.trim();
  if (row.was === 'number' && text !== '' && Number.isFinite(Number(text))) return Number(text);
  if (row.was === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return row.value;
}

/**
 * A colleague's change (`next`) to the contact shown as `base`, under the agent's unsaved
 * rows: an attribute the agent left as it was takes its new value (or goes, if they removed
 * it), one they added or edited stays as typed, and one the colleague added joins the end.
 * The save sends the attributes whole, so it then keeps the colleague's change.
 */
function rebase(base: Contact, next: Contact, rows: Row[]): Row[] {
  const before = new Map(rowsOf(base).map((r) => [r.key, r.value]));
  const after = new Map(rowsOf(next).map((r) => [r.key, r]));
  const out = rows.flatMap((r) => {
    if (before.get(r.key) !== r.value) return [r];
    const now = after.get(r.key);
    return now ? [now] : [];
  });
  for (const [key, r] of after) if (!before.has(key) && !out.some((o) => o.key === key)) out.push(r);
  return out;
}

/**
 * The contact of the open conversation: name, handles and attributes (edited here, saved with
 * `PATCH /v1/contacts/:id`, which replaces the attributes whole), and their other conversations.
 */
export function ContactPanel({ thread }: { thread: Thread }) {
  const s = useStore(session)!;
  const [contact, setContact] = useState<Contact | null>(null);
  const [others, setOthers] = useState<Thread[]>([]);
  const [name, setName] = useState('');
  const [rows, setRows] = useState<Row[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  // Read when first opened: most conversations are answered without looking at the contact.
  const [open, setOpen] = useState(false);
  /** The contact as last read or heard: what the agent's edits are measured against. */
  const shown = useRef<Contact | null>(null);

  const show = (c: Contact) => {
    shown.current = c;
    setContact(c);
    setName(c.name ?? '');
    setRows(rowsOf(c));
    contacts.update((m) => new Map(m).set(c.id, c));
  };

  useEffect(() => {
    if (!open) return;
    let live = true;
    setSaved(false);
    setError(null);
    Promise.all([s.client.contact(thread.contactId), s.client.page<Thread>('/v1/threads', { contactId: thread.contactId, limit: 20 })])
      .then(([c, page]) => {
        if (!live) return;
        show(c);
        setOthers(page.data.filter((t) => t.id !== thread.id));
      })
      .catch((err: unknown) => live && setError(errorText(err)));
    return () => {
      live = false;
    };
  }, [thread.contactId, thread.id, open]);

  // A colleague's change shows here live, under what the agent is typing (see rebase).
  useEffect(
    () =>
      onRealtime((event) => {
        const base = shown.current;
        if (event.type !== 'contact.updated' || !base || event.data.id !== base.id) return;
        const next = event.data;
        shown.current = next;
        setContact(next);
        setName((typed) => (typed === (base.name ?? '') ? (next.name ?? '') : typed));
        setRows((list) => rebase(base, next, list));
      }),
    [],
  );

  async function save(e: Event) {
    e.preventDefault();
    const attributes: Record<string, Value> = {};
    for (const row of rows) {
      const key = row.key.trim();
      if (key === '') continue;
      if (key in attributes) {
        setError(`The attribute "${key}" is there twice.`);
        return;
      }
      attributes[key] = typedValue(row);
    }
    const giveFocusBack = holdFocus();
    setBusy(true);
    try {
      show(await s.client.updateContact(thread.contactId, { name: name.trim() === '' ? null : name.trim(), attributes }));
      setError(null);
      setSaved(true);
    } catch (err) {
      setError(errorText(err));
      setSaved(false);
    } finally {
      setBusy(false);
      giveFocusBack();
    }
  }

  const edit = (i: number, patch: Partial<Row>) => {
    setSaved(false);
    setRows((list) => list.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  };

  return (
    <details class="contact-panel" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Contact details</summary>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {contact && (
        <form onSubmit={save} aria-label="Contact">
          <label class="field">
            Name{' '}
            <input
              value={name}
              maxLength={200}
              onInput={(e) => {
                setSaved(false);
                setName(e.currentTarget.value);
              }}
            />
          </label>
          <h3>Handles</h3>
          <ul class="handles">
            {contact.email && <li>E-mail: {contact.email}</li>}
            {contact.phone && <li>Phone: {contact.phone}</li>}
            {contact.handles.map((h) => (
              <li key={`${h.integrationKey}:${h.externalId}`}>
                {channelName(h.integrationKey)}: {h.externalId}
              </li>
            ))}
          </ul>
          <h3>Attributes</h3>
          {rows.length === 0 && <p class="muted">No attributes yet.</p>}
          <ul class="attributes">
            {rows.map((row, i) => (
              <li key={i}>
                <label>
                  <span class="sr-only">Attribute {i + 1} name</span>
                  <input value={row.key} placeholder="name" maxLength={100} onInput={(e) => edit(i, { key: e.currentTarget.value })} />
                </label>
                <label>
                  <span class="sr-only">{row.key ? `${row.key} value` : `Attribute ${i + 1} value`}</span>
                  <input value={row.value} placeholder="value" onInput={(e) => edit(i, { value: e.currentTarget.value })} />
                </label>
                <button
                  type="button"
                  aria-label={`Remove attribute ${row.key || i + 1}`}
                  onClick={() => {
                    setSaved(false);
                    setRows((list) => list.filter((_, j) => j !== i));
                  }}
                >
                  ×
                </button>
              </li>
            ))}
          </ul>
          <div class="action-row">
            <button type="button" onClick={() => setRows((list) => [...list, { key: '', value: '', was: 'string' }])}>
              Add attribute
            </button>
            <button type="submit" class="primary" disabled={busy}>
              Save contact
            </button>
            {saved && <span role="status">Saved</span>}
          </div>
        </form>
      )}
      <h3>Other conversations</h3>
      {others.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="other-threads">
          {others.map((t) => (
            <li key={t.id}>
              <a href={`/app/c/${t.id}`} onClick={(e) => onLinkClick(e, `/c/${t.id}`)}>
                {channelName(t.integrationKey)} · {t.status} · {shortTime(t.lastMessageAt)}
              </a>
              {t.lastMessagePreview && <span class="muted"> {t.lastMessagePreview}</span>}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
