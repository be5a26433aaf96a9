import { useState } from 'preact/hooks';
import type { Connection, Team, TeamUser } from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure, FormError } from './Failure';
import { InlineForm } from './InlineForm';

/** What an open edit form holds: the team's fields as typed, business hours as JSON text. */
interface Draft {
  name: string;
  description: string;
  autoAssign: boolean;
  memberIds: number[];
  hours: string;
}

const draftOf = (t: Team): Draft => ({
  name: t.name,
  description: t.description ?? '',
  autoAssign: t.autoAssign,
  memberIds: [...t.memberIds],
  hours: t.businessHours ? JSON.stringify(t.businessHours, null, 2) : '',
});

const sameMembers = (a: number[], b: number[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/**
 * Teams (docs/teams.md): who sees what, the teams with their members, routing and hours, and
 * the team each connection's new conversations start in.
 */
export function Teams() {
  const s = useStore(session)!;
  const teams = useLoad(() => collect(s.client.teams({ limit: 100 })));
  const users = useLoad(() => collect(s.client.users({ limit: 100 })));
  const workspace = useLoad(() => s.client.workspace());
  const connections = useLoad(() => collect(s.client.connections({ limit: 100 })));
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [autoAssign, setAutoAssign] = useState(false);
  const [editing, setEditing] = useState<{ id: number; draft: Draft } | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // A refusal shows beside the form that caused it; a reload of the list does not clear it.
  const [createError, setCreateError] = useState<string | null>(null);
  const [editError, setEditError] = useState<string | null>(null);
  const error = teams.error ?? users.error ?? workspace.error ?? connections.error;
  const setError = teams.setError;
  const people = (users.data ?? []).filter((u) => u.active || u.invited);
  const nameOf = (id: number) => (users.data ?? []).find((u) => u.id === id)?.name ?? `User ${id}`;

  async function create(e: Event) {
    e.preventDefault();
    const body = { name, description: description.trim() === '' ? null : description, autoAssign };
    if (await attempt(() => s.client.createTeam(body), setCreateError)) {
      setSaved(`Team ${name} added.`);
      setName('');
      setDescription('');
      setAutoAssign(false);
      await teams.reload();
    }
  }

  async function save(e: Event, team: Team) {
    e.preventDefault();
    if (!editing) return;
    const { draft } = editing;
    let businessHours = null;
    try {
      businessHours = draft.hours.trim() === '' ? null : JSON.parse(draft.hours);
    } catch {
      setEditError('Business hours: not valid JSON');
      return;
    }
    const patch = {
      name: draft.name,
      description: draft.description.trim() === '' ? null : draft.description,
      autoAssign: draft.autoAssign,
      businessHours,
    };
    const ok = await attempt(async () => {
      await s.client.updateTeam(team.id, patch);
      if (!sameMembers(draft.memberIds, team.memberIds)) await s.client.setTeamMembers(team.id, { userIds: draft.memberIds });
    }, setEditError);
    if (ok) {
      setEditing(null);
      setSaved(`Team ${draft.name} saved.`);
    }
    await teams.reload();
  }

  async function remove(team: Team) {
    if (await attempt(() => s.client.deleteTeam(team.id), setError)) {
      setSaved(`Team ${team.name} deleted; its conversations are in no team now.`);
      await Promise.all([teams.reload(), connections.reload()]);
    }
  }

  return (
    <>
      <Failure error={error} />
      {saved && (
        <p role="status" class="muted">
          {saved}
        </p>
      )}
      <form class="settings-form" aria-labelledby="teams-visibility" onSubmit={(e) => e.preventDefault()}>
        <h3 id="teams-visibility">Who sees what</h3>
        <label class="check">
          <input
            type="checkbox"
            checked={workspace.data?.restrictAgentsToTeams ?? false}
            disabled={!workspace.data}
            onChange={(e) => {
              const restrictAgentsToTeams = e.currentTarget.checked;
              void attempt(() => s.client.updateWorkspace({ restrictAgentsToTeams }), setError).then(workspace.reload);
            }}
          />{' '}
          Agents see only their teams' conversations, those of no team and those assigned to them (admins see all)
        </label>
      </form>

      <form class="settings-form" onSubmit={create} aria-labelledby="team-new">
        <h3 id="team-new">New team</h3>
        <label>
          Team name
          <input required maxLength={60} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description (optional)
          <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={autoAssign} onChange={(e) => setAutoAssign(e.currentTarget.checked)} /> Assign its new
          conversations automatically
        </label>
        <FormError error={createError} />
        <button type="submit" class="primary">
          Add team
        </button>
      </form>

      {teams.data && teams.data.length === 0 && <p class="empty">No teams yet.</p>}
      <ul class="settings-list" aria-label="Teams">
        {(teams.data ?? []).map((t) =>
          editing?.id === t.id ? (
            <li key={t.id}>
              <TeamForm
                team={t}
                draft={editing.draft}
                people={people}
                onChange={(draft) => setEditing({ id: t.id, draft })}
                error={editError}
                onSubmit={(e) => void save(e, t)}
                onCancel={() => {
                  setEditing(null);
                  setEditError(null);
                }}
              />
            </li>
          ) : (
            <li key={t.id}>
              <div>
                <strong>{t.name}</strong>
                {t.description && <p class="muted">{t.description}</p>}
                <p class="muted">
                  {t.memberIds.length === 0 ? 'No members' : `Members: ${t.memberIds.map(nameOf).join(', ')}`}
                  {t.autoAssign ? ' · assigns automatically' : ''}
                  {t.businessHours ? ` · own hours (${t.businessHours.timezone})` : ''}
                </p>
              </div>
              <div class="row-actions">
                <button
                  type="button"
                  id={`team-${t.id}-edit`}
                  aria-label={`Edit ${t.name}`}
                  onClick={() => {
                    setEditing({ id: t.id, draft: draftOf(t) });
                    setEditError(null);
                  }}
                >
                  Edit
                </button>
                <button type="button" aria-label={`Delete ${t.name}`} onClick={() => void remove(t)}>
                  Delete
                </button>
              </div>
            </li>
          ),
        )}
      </ul>

      {(connections.data ?? []).length > 0 && (
        <>
          <h3 id="teams-connections">New conversations of each connection start in</h3>
          <ul class="settings-list" aria-labelledby="teams-connections">
            {(connections.data ?? []).map((c) => (
              <ConnectionTeam
                key={c.id}
                connection={c}
                teams={teams.data ?? []}
                onChange={(teamId) => void attempt(() => s.client.updateConnection(c.id, { teamId }), setError).then(connections.reload)}
              />
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function TeamForm(props: {
  team: Team;
  draft: Draft;
  people: TeamUser[];
  error: string | null;
  onChange: (draft: Draft) => void;
  onSubmit: (e: Event) => void;
  onCancel: () => void;
}) {
  const { team, draft, people, onChange } = props;
  const toggle = (id: number, on: boolean) =>
    onChange({ ...draft, memberIds: on ? [...draft.memberIds, id] : draft.memberIds.filter((m) => m !== id) });
  return (
    <InlineForm label={`Edit ${team.name}`} onSubmit={props.onSubmit} onCancel={props.onCancel}>
      <label>
        Team name
        <input required maxLength={60} value={draft.name} onInput={(e) => onChange({ ...draft, name: e.currentTarget.value })} />
      </label>
      <label>
        Description (optional)
        <input maxLength={500} value={draft.description} onInput={(e) => onChange({ ...draft, description: e.currentTarget.value })} />
      </label>
      <fieldset>
        <legend>Members</legend>
        {people.map((u) => (
          <label class="check" key={u.id}>
            <input type="checkbox" checked={draft.memberIds.includes(u.id)} onChange={(e) => toggle(u.id, e.currentTarget.checked)} />{' '}
            {u.name}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={draft.autoAssign} onChange={(e) => onChange({ ...draft, autoAssign: e.currentTarget.checked })} />{' '}
        Assign its new conversations automatically (to online members under their cap)
      </label>
      <label>
        Business hours (JSON; empty = the workspace's)
        <textarea rows={5} value={draft.hours} onInput={(e) => onChange({ ...draft, hours: e.currentTarget.value })} />
      </label>
      <FormError error={props.error} />
    </InlineForm>
  );
}

function ConnectionTeam({
  connection,
  teams,
  onChange,
}: {
  connection: Connection;
  teams: Team[];
  onChange: (teamId: number | null) => void;
}) {
  return (
    <li>
      <label>
        {connection.name}{' '}
        <select
          value={connection.teamId === null ? '' : String(connection.teamId)}
          onChange={(e) => onChange(e.currentTarget.value === '' ? null : Number(e.currentTarget.value))}
        >
          <option value="">No team</option>
          {teams.map((t) => (
            <option key={t.id} value={String(t.id)}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
    </li>
  );
}
