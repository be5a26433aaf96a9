import { useEffect, useRef, useState } from 'preact/hooks';
import type { Thread, ThreadPatch } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { holdFocus } from '../shared/focus';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { assignable, team, wantTeam } from '../shared/team';
import { pickedDate, SNOOZE_CHOICES, snoozeUntil } from './snooze';
import './actions.css';

const LABEL = /^[a-z0-9_:-]{1,50}$/;
/** The service keeps at most 20 labels on a thread (DESIGN "Working a conversation"). */
const MAX_LABELS = 20;

/**
 * What an agent does to the open conversation beside resolving it: assign it to a teammate,
 * snooze it, label it. Every change goes through `PATCH /v1/threads/:id`; the answer (and any
 * colleague's change, as `thread.updated` on the socket) comes back through `thread`.
 */
export function ThreadActions({ thread, onChange }: { thread: Thread; onChange(t: Thread): void }) {
  const s = useStore(session)!;
  const users = useStore(team);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [label, setLabel] = useState('');
  const [date, setDate] = useState('');
  const [snoozeOpen, setSnoozeOpen] = useState(false);
  // Where the focus goes when the control that had it is gone after a change.
  const snoozeToggle = useRef<HTMLButtonElement>(null);
  const labelInput = useRef<HTMLInputElement>(null);

  useEffect(wantTeam, []);
  useEffect(() => {
    setError(null);
    setSnoozeOpen(false);
  }, [thread.id]);

  async function change(patch: ThreadPatch): Promise<boolean> {
    const giveFocusBack = holdFocus();
    setBusy(true);
    try {
      onChange(await s.client.updateThread(thread.id, patch));
      setError(null);
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
      giveFocusBack();
    }
  }

  async function snooze(until: Date) {
    if (await change({ status: 'snoozed', snoozedUntil: until.toISOString() })) {
      setSnoozeOpen(false);
      setDate('');
      snoozeToggle.current?.focus();
    }
  }

  async function addLabel(e: Event) {
    e.preventDefault();
    const name = label.trim().toLowerCase();
    if (!LABEL.test(name)) {
      setError('A label is 1 to 50 of a-z, 0-9, "-", "_" and ":".');
      return;
    }
    if (!thread.labels.includes(name) && thread.labels.length >= MAX_LABELS) {
      setError(`A conversation carries at most ${MAX_LABELS} labels: remove one first.`);
      return;
    }
    if (thread.labels.includes(name) || (await change({ labels: [...thread.labels, name] }))) setLabel('');
  }

  const people = (users ?? []).filter((u) => assignable(u) || u.id === thread.assigneeId);
  const assignee = users?.find((u) => u.id === thread.assigneeId);
  return (
    <div class="thread-actions">
      <div class="action-row">
        <label class="inline">
          Assignee{' '}
          <select
            id="thread-assignee"
            value={thread.assigneeId === null ? '' : String(thread.assigneeId)}
            disabled={busy || users === null}
            onChange={(e) => {
              const v = e.currentTarget.value;
              void change({ assigneeId: v === '' ? null : Number(v) });
            }}
          >
            <option value="">Unassigned</option>
            {people.map((u) => (
              <option key={u.id} value={String(u.id)}>
                {u.id === s.user.id ? `${u.name} (you)` : u.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          ref={snoozeToggle}
          aria-expanded={snoozeOpen}
          aria-controls="snooze-menu"
          onClick={() => setSnoozeOpen(!snoozeOpen)}
        >
          Snooze…
        </button>
        <p class="state" aria-live="polite">
          {thread.status === 'snoozed' && thread.snoozedUntil
            ? `Snoozed until ${fullTime(thread.snoozedUntil)}`
            : thread.status === 'resolved'
              ? 'Resolved'
              : assignee && assignee.id !== s.user.id
                ? `Assigned to ${assignee.name}`
                : ''}
        </p>
      </div>
      {snoozeOpen && (
        <fieldset id="snooze-menu" class="snooze-menu">
          <legend class="sr-only">Snooze until</legend>
          {SNOOZE_CHOICES.map(([choice, text]) => (
            <button key={choice} type="button" disabled={busy} onClick={() => void snooze(snoozeUntil(choice))}>
              {text}
            </button>
          ))}
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              const d = pickedDate(date);
              if (d) void snooze(d);
              else setError('Pick a date and time in the future.');
            }}
          >
            <label>
              Date <input type="datetime-local" value={date} onInput={(e) => setDate(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={busy}>
              Snooze until then
            </button>
          </form>
        </fieldset>
      )}
      <div class="action-row labels-row">
        <ul class="labels" aria-label="Labels">
          {thread.labels.map((l) => (
            <li key={l} class="label">
              {l}
              <button
                type="button"
                class="remove"
                aria-label={`Remove label ${l}`}
                disabled={busy}
                onClick={() =>
                  void change({ labels: thread.labels.filter((x) => x !== l) }).then((done) => done && labelInput.current?.focus())
                }
              >
                ×
              </button>
            </li>
          ))}
        </ul>
        <form class="inline" onSubmit={addLabel}>
          <label>
            <span class="sr-only">New label</span>
            <input ref={labelInput} value={label} placeholder="label" maxLength={50} onInput={(e) => setLabel(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={busy || label.trim() === ''}>
            Add label
          </button>
        </form>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
