import { useEffect, useState } from 'preact/hooks';
import type { AuditEntry, AuditLogQuery } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { team, wantTeam } from '../shared/team';
import { AUDIT_ACTIONS } from './audit-actions';
import { Failure } from './Failure';

const shown = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

function Changes({ changes }: { changes: AuditEntry['changes'] }) {
  if (!changes) return <>—</>;
  return (
    <ul class="audit-changes">
      {Object.entries(changes).map(([field, change]) => {
        const { old, new: next } = (change ?? {}) as { old?: unknown; new?: unknown };
        return (
          <li key={field}>
            <code>{field}</code>: {shown(old)} → {shown(next)}
          </li>
        );
      })}
    </ul>
  );
}

/** A day typed in a date field, as the start of that day in UTC (`to` takes the day after: its end). */
const dayStart = (day: string, plus = 0) => new Date(Date.parse(`${day}T00:00:00Z`) + plus * 86_400_000).toISOString();

/** The workspace's audit log (admins): who did what, newest first, with filters (docs/security.md, "Audit log"). */
export function AuditLog() {
  const s = useStore(session)!;
  const users = useStore(team);
  const [actorId, setActorId] = useState('');
  const [action, setAction] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [rows, setRows] = useState<AuditEntry[] | null>(null);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  const query = (): AuditLogQuery => ({
    limit: 50,
    ...(actorId ? { actorId: Number(actorId) } : {}),
    ...(action ? { action } : {}),
    ...(from ? { from: dayStart(from) } : {}),
    ...(to ? { to: dayStart(to, 1) } : {}),
  });

  async function load(cursor?: string) {
    try {
      const page = await s.client.auditLog({ ...query(), ...(cursor ? { cursor } : {}) });
      setRows((before) => (cursor ? [...(before ?? []), ...page.data] : page.data));
      setNext(page.meta.nextCursor);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  }

  useEffect(() => {
    wantTeam();
  }, []);
  useEffect(() => {
    void load();
  }, [actorId, action, from, to]);

  return (
    <>
      <form class="audit-filters" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
        <label>
          Who
          <select value={actorId} onChange={(e) => setActorId(e.currentTarget.value)}>
            <option value="">Anyone</option>
            {(users ?? []).map((u) => (
              <option key={u.id} value={String(u.id)}>
                {u.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <select value={action} onChange={(e) => setAction(e.currentTarget.value)}>
            <option value="">Any action</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          From
          <input type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To
          <input type="date" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
      </form>
      <Failure error={error} />
      {rows && rows.length === 0 && <p class="empty">No entries.</p>}
      {rows && rows.length > 0 && (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable)
        <section class="table-scroll" aria-label="Audit log table" tabIndex={0}>
          <table class="settings-table">
            <caption class="sr-only">Audit log</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">On</th>
                <th scope="col">Changes</th>
                <th scope="col">Address</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id} data-entry-id={e.id}>
                  <td>{fullTime(e.at)}</td>
                  <td>{e.actor.name ?? (e.actor.type === 'system' ? 'the service' : `${e.actor.type} ${e.actor.id ?? ''}`)}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>{e.target ? `${e.target.type} ${e.target.id}` : '—'}</td>
                  <td class="wrap">
                    <Changes changes={e.changes} />
                  </td>
                  <td>{e.ip ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {next && (
        <button type="button" onClick={() => void load(next)}>
          Older entries
        </button>
      )}
    </>
  );
}
