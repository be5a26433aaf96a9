import { useState } from 'preact/hooks';
import type { TeamUser, TeamUserRole } from '../../../packages/client/src/index';
import { errorText, retryAfterOf } from '../shared/api';
import { duration } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { reloadTeam } from '../shared/team';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure } from './Failure';

/** The role a person picks: the service keeps a list of roles, this page offers agent or admin. */
const ROLE_SETS: [string, TeamUserRole[]][] = [
  ['agent', ['agent']],
  ['admin', ['admin']],
];
const roleOf = (u: TeamUser) => (u.roles.includes('admin') ? 'admin' : 'agent');
/** Only the platform's operator changes platform staff: the service refuses a workspace admin. */
const isOperator = (u: TeamUser) => u.roles.includes('operator');
/** An invited user whose link no longer works: only a new invite lets them in. */
const inviteExpired = (u: TeamUser) => u.invited && u.inviteExpiresAt !== null && Date.parse(u.inviteExpiresAt) <= Date.now();

/** Why `POST /v1/users` refused, in words: a 429 is the limit of new invites to one person. */
function refusal(err: unknown, email: string): string {
  const wait = retryAfterOf(err);
  return wait !== null ? `${email} has been invited 5 times in the last hour. Try again in ${duration(wait)}.` : errorText(err);
}

/** The team: invite by e-mail (or create with a first password), change a role, deactivate or reactivate. */
export function Users() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => collect(s.client.users({ limit: 100 })));
  const [form, setForm] = useState({ name: '', email: '', password: '', role: 'agent' });
  const [added, setAdded] = useState<string | null>(null);

  const after = async () => {
    await reload();
    await reloadTeam();
  };

  /** Mails a new link to someone invited and not signed up (the old ones stop working). */
  async function inviteAgain(u: TeamUser) {
    setAdded(null);
    try {
      await s.client.createUser({ name: u.name, email: u.email, roles: u.roles });
      setError(null);
      setAdded(`A new invite is on its way to ${u.email}; it works for 7 days.`);
    } catch (err) {
      setError(refusal(err, u.email));
    }
    await after();
  }

  async function create(e: Event) {
    e.preventDefault();
    const roles = ROLE_SETS.find(([r]) => r === form.role)?.[1] ?? ['agent'];
    // Without a first password the service mails an invite and the person chooses their own.
    const body = { name: form.name, email: form.email, roles, ...(form.password ? { password: form.password } : {}) };
    setAdded(null);
    try {
      await s.client.createUser(body);
    } catch (err) {
      // The e-mail of someone invited and not signed up invites them again: the same hourly limit.
      setError(refusal(err, form.email));
      return;
    }
    setError(null);
    setAdded(form.password ? `${form.email} can sign in now.` : `An invite is on its way to ${form.email}; it works for 7 days.`);
    setForm({ name: '', email: '', password: '', role: 'agent' });
    await after();
  }

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={create} aria-labelledby="user-new">
        <h3 id="user-new">Invite a teammate</h3>
        <label>
          Name
          <input required value={form.name} maxLength={200} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </label>
        <label>
          E-mail
          <input type="email" required value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        </label>
        <label>
          First password (optional: without one, an invite is mailed)
          <input
            type="password"
            autocomplete="new-password"
            minLength={8}
            value={form.password}
            onInput={(e) => setForm({ ...form, password: e.currentTarget.value })}
          />
        </label>
        <label>
          Role
          <select value={form.role} onChange={(e) => setForm({ ...form, role: e.currentTarget.value })}>
            {ROLE_SETS.map(([r]) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="primary">
          Add user
        </button>
      </form>
      <p role="status">{added}</p>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable) */}
      <section class="table-scroll" aria-label="Users table" tabIndex={0}>
        <table class="settings-table">
          <caption class="sr-only">Users</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {(data ?? []).map((u) => (
              <tr key={u.id}>
                <td id={`user-${u.id}-name`}>{u.name}</td>
                <td>{u.email}</td>
                <td>
                  <select
                    aria-label={`Role of ${u.name}`}
                    value={roleOf(u)}
                    disabled={u.id === s.user.id || isOperator(u)}
                    onChange={(e) => {
                      const roles = ROLE_SETS.find(([r]) => r === e.currentTarget.value)?.[1] ?? ['agent'];
                      void attempt(() => s.client.updateUser(u.id, { roles }), setError).then(after);
                    }}
                  >
                    {ROLE_SETS.map(([r]) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <span>
                    {u.active ? 'Active' : inviteExpired(u) ? 'Invite expired' : u.invited ? 'Invited' : 'Deactivated'}
                    {isOperator(u) && ' (platform staff)'}
                  </span>{' '}
                  {u.invited && (
                    <button type="button" aria-describedby={`user-${u.id}-name`} onClick={() => void inviteAgain(u)}>
                      Invite again
                    </button>
                  )}
                  {u.id !== s.user.id && !isOperator(u) && !u.invited && (
                    <button
                      type="button"
                      aria-label={`${u.active ? 'Deactivate' : 'Reactivate'} ${u.name}`}
                      onClick={() => void attempt(() => s.client.updateUser(u.id, { active: !u.active }), setError).then(after)}
                    >
                      {u.active ? 'Deactivate' : 'Reactivate'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
